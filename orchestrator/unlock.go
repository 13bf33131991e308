package orchestrator

import (
	"context"
	"errors"
	"fmt"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/lease"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// unlockedByOperator is the last error of a task whose run an operator's unlock stopped.
const unlockedByOperator = "tenant unlocked by an operator: the run's lease was removed"

// Unlock removes a tenant's lease whoever holds it (an SRE freeing a tenant stuck behind a
// lease) and fences its holder: the fence epoch of the tenant's latest task is bumped, so
// the old holder's writes are refused from now on, and a RUNNING task becomes INTERRUPTED
// (retry it to go on). A run of this process is stopped at once; a run elsewhere stops at its
// next write or lease refresh. Unlocking a tenant nobody holds fences and reports nothing
// released.
func (rec *recovery) Unlock(ctx context.Context, tenantID string) (lease.Unlocked, error) {
	out := lease.Unlocked{TenantID: tenantID}
	latest, err := rec.tasks.Latest(ctx, tenantID)
	if err != nil && !errors.Is(err, task.ErrNotFound) {
		return out, err
	}
	if latest != nil {
		out.TaskID = latest.ID()
		// A run of this process is stopped first (it writes nothing more), which gives its
		// lease back: who held it is read before.
		if h, held, err := rec.locker.Holder(ctx, tenantID); err == nil && held && rec.stopLocal(ctx, latest.ID()) {
			out.Released, out.Previous = true, h
		}
	}
	h, held, err := rec.locker.ForceRelease(ctx, tenantID)
	if err != nil {
		return out, fmt.Errorf("orchestrator: unlock %s: %w", tenantID, err)
	}
	if held {
		out.Released, out.Previous = true, h
	}
	h = out.Previous
	if latest == nil {
		if !held {
			return out, task.ErrNotFound
		}
		return out, nil
	}
	if err := rec.fence(ctx, latest.ID(), &out); err != nil {
		return out, fmt.Errorf("orchestrator: unlock %s: %w", tenantID, err)
	}
	if out.Interrupted {
		rec.cfg.Logger.Warn("tenant unlocked: its run was interrupted", "tenant_id", tenantID, "task_id", latest.ID(),
			"plan_id", latest.PlanID(), "previous_owner", h.Owner, "epoch", out.Epoch)
		rec.settler.settle(latest.PlanID())
	}
	return out, nil
}

// fence bumps the task's fence epoch and interrupts it if it is RUNNING (as the store holds it
// at the new epoch).
func (rec *recovery) fence(ctx context.Context, taskID string, out *lease.Unlocked) error {
	unlock := rec.taskLocks.lock(taskID)
	defer unlock()
	cur, err := rec.tasks.BumpFence(ctx, taskID)
	if err != nil {
		return fmt.Errorf("fence: %w", err)
	}
	out.Epoch = cur.Fence()
	_, err = rec.update(ctx, taskID, func(cur *task.Task) (*checkpoint.Checkpoint, error) {
		if cur.Status() != task.Running {
			return nil, errSkip
		}
		return nil, cur.Abandon(cur.Fence(), task.Failure{Stage: stageName(cur), Class: stage.ClassLeaseLost, Message: unlockedByOperator}, rec.now())
	})
	if errors.Is(err, errSkip) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("interrupt: %w", err)
	}
	out.Interrupted = true
	return nil
}

// stopLocal stops this process's run of taskID, if any, as fenced (it writes nothing more),
// and waits until it has ended or ctx ends. It reports whether there was one.
func (rec *recovery) stopLocal(ctx context.Context, taskID string) bool {
	run := rec.local(taskID)
	if run == nil {
		return false
	}
	run.cancel(errFenced)
	select {
	case <-run.done:
	case <-ctx.Done():
	}
	return true
}
