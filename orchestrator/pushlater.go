package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// A push the shared Queue failed is ambiguous: Redis may have queued the tasks all the same
// (the script ran and its reply was lost, or a command after it failed, such as marking the
// plan active). Queued in the Fallback as well, a task could then be claimed from both, and
// its tenant run on two executors at once. So such a push is never queued here: it is kept
// and made again, in order with the other changes the Queue refused, once the Queue answers
// (catchUp). A push is idempotent (a task queued or claimed already is not added again), so
// making it again is harmless, and a task is never stranded: it is queued in the Queue then.

// pushLater keeps the push of ids of planID, which the shared Queue failed with err (or which
// could not be made), to make again once the Queue answers.
func (f *feeder) pushLater(planID string, ids []string, err error) {
	f.cfg.Logger.Warn("queue tasks: the push failed (the queue may have queued them); pushed again once the queue answers, not queued here",
		"plan_id", planID, "tasks", len(ids), "err", err)
	ids = slices.Clone(ids)
	f.mu.Lock()
	f.redo = append(f.redo, func(ctx context.Context) error { return f.repush(ctx, planID, ids) })
	f.mu.Unlock()
}

// repush makes a failed push of ids again: those still PENDING (one that ran meanwhile, queued
// by the push that seemed to fail, or that was cancelled, is left out) are pushed with the
// plan's pause state and limits as they stand now.
func (f *feeder) repush(ctx context.Context, planID string, ids []string) error {
	statuses, err := f.tasks.Statuses(ctx, ids)
	switch {
	case errors.Is(err, task.ErrNotFound): // one is gone: push them all, a claim skips what is not PENDING
	case err != nil:
		return fmt.Errorf("orchestrator: push again to plan %s: %w", planID, err)
	default:
		var pending []string
		for i, st := range statuses {
			if st == task.Pending {
				pending = append(pending, ids[i])
			}
		}
		ids = pending
	}
	if len(ids) == 0 {
		return nil
	}
	p, err := f.plans.Plan(ctx, planID)
	if err == nil {
		err = f.queue.SetPaused(ctx, planID, p.Status() == plan.Paused)
	}
	if err == nil {
		err = f.queue.Push(ctx, planID, limitsOf(p), ids)
	}
	if err != nil {
		return fmt.Errorf("orchestrator: push again to plan %s: %w", planID, err)
	}
	return nil
}
