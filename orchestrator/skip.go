package orchestrator

import (
	"context"
	"errors"
	"fmt"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// SkipTask ends a task that does not run for good, without deploying its tenant (task.Skip),
// by a compare-and-set wherever it is: a PENDING one leaves its plan's queue. Its plan is
// settled again: a FAILED plan with no failure left is reopened first, for the task skipped
// was what failed it (a plan whose failed tenants an operator skipped completes, with
// exceptions). A plan an operator cancelled stays CANCELLED.
func (ctl *control) SkipTask(ctx context.Context, taskID string) error {
	t, err := ctl.tasks.Task(ctx, taskID)
	if err != nil {
		return err
	}
	planID := t.PlanID()
	unlock := ctl.planLocks.lock(planID)
	defer unlock()
	was := task.Status("")
	if _, err := ctl.update(ctx, taskID, func(t *task.Task) (*checkpoint.Checkpoint, error) {
		was = t.Status()
		return nil, t.Skip(ctl.now())
	}); err != nil {
		return err
	}
	if was == task.Pending {
		ctl.feeder.unqueue(ctx, planID, []string{taskID})
	}
	p, err := ctl.plans.Plan(ctx, planID)
	if err != nil {
		return fmt.Errorf("orchestrator: skip task %s: plan %s: %w", taskID, planID, err)
	}
	if p.Status() == plan.Failed {
		// Reopened only when this skip may change the plan's end: with another failure left it
		// stays FAILED as it is (a bulk skip of 750 failures reopens it once, at the last, not
		// 750 times, each with its plan.ended notice). Each skip reads after its own write, so
		// of two skips on two executors at least one sees the other's.
		if failed, err := ctl.anyFailure(ctx, p.TaskIDs()); err != nil || failed {
			return err
		}
		_, err = ctl.updatePlan(ctx, planID, func(p *plan.Plan) error {
			if p.Status() != plan.Failed {
				return errSkip
			}
			return p.Reopen()
		})
		if err != nil && !errors.Is(err, errSkip) {
			return fmt.Errorf("orchestrator: skip task %s: reopen plan %s: %w", taskID, planID, err)
		}
	}
	ctl.settler.settleHeld(planID)
	return nil
}

// anyFailure reports whether one of ids is a task that makes its plan end FAILED (settledOutcome),
// reading their statuses a chunk at a time and stopping at the first.
func (ctl *control) anyFailure(ctx context.Context, ids []string) (bool, error) {
	for lo := 0; lo < len(ids); lo += settleChunk {
		statuses, err := ctl.statusesOf(ctx, ids[lo:min(lo+settleChunk, len(ids))])
		if err != nil {
			return false, fmt.Errorf("orchestrator: statuses: %w", err)
		}
		for i, st := range statuses {
			if o, err := settledOutcome([]task.Status{st}, ids[lo+i:lo+i+1]); err == nil && o.failed {
				return true, nil
			}
		}
	}
	return false, nil
}
