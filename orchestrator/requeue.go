package orchestrator

import (
	"context"
	"errors"
	"fmt"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/errcode"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// requeue applies fn to a task, by a compare-and-set, and queues it if fn made it PENDING (a
// task fn leaves as it was, RUNNING with a request, is not queued), reopening its plan if it had ended. It takes effect fully or answers an
// error having changed nothing: a plan that must be reopened is reopened before the task is
// touched, so a plan that cannot be (a store error, a status that refuses it) leaves the task
// as it was; a task that then cannot be made PENDING (another writer changed it, its tenant
// moved on) has its plan settled again from its tasks (back to the status it had). A task
// made PENDING is always queued.
func (ctl *control) requeue(ctx context.Context, taskID string, fn func(t *task.Task, cp *checkpoint.Checkpoint) (*checkpoint.Checkpoint, error)) error {
	if ctl.draining.Load() {
		return errcode.ErrShuttingDown
	}
	t, err := ctl.tasks.Task(ctx, taskID)
	if err != nil {
		return err
	}
	planID := t.PlanID()
	unlock := ctl.planLocks.lock(planID)
	defer unlock()
	cp, err := ctl.ckpts.Checkpoint(ctx, taskID)
	if errors.Is(err, checkpoint.ErrNotFound) {
		cp, err = checkpoint.New(taskID), nil
	}
	if err != nil {
		return err
	}
	// A dry run on the copy just read: a refused transition is answered before anything is
	// written; a task that will be queued has its plan reopened first, then its tenant taken
	// back (outside the task's write: a store may not be called from within its Update).
	probe := t.Clone()
	if _, err := fn(probe, cp); err != nil {
		return err
	}
	willQueue := probe.Status() == task.Pending && t.Status() != task.Pending
	reopened := false
	if willQueue {
		if reopened, err = ctl.reopen(ctx, planID); err != nil {
			return err
		}
		// The tenant must still be this task's: another executor may have given it a new one.
		if err := ctl.tasks.Reactivate(ctx, probe); err != nil {
			return ctl.undoReopen(planID, reopened, err)
		}
	}
	queued := false
	_, err = ctl.update(ctx, taskID, func(t *task.Task) (*checkpoint.Checkpoint, error) {
		was := t.Status()
		out, err := fn(t, cp)
		if err != nil {
			return nil, err
		}
		// A run still winding down (it just paused or failed) is waited for by the next claim.
		queued = t.Status() == task.Pending && was != task.Pending
		if queued != willQueue { // changed since the dry run: the caller tries again
			return nil, fmt.Errorf("orchestrator: task %s changed meanwhile: %w", taskID, task.ErrConflict)
		}
		return out, nil
	})
	if err != nil {
		return ctl.undoReopen(planID, reopened, err)
	}
	if !queued {
		return nil
	}
	// The retry has taken effect: the task is PENDING, and is queued whatever happens next
	// (a push that cannot be made now is made later). Its plan is reopened again if it ended
	// meanwhile (settled by another executor from its tasks as they stood before this one was
	// made PENDING); a store that refuses that now is only logged: the task runs all the same.
	if _, err := ctl.reopen(ctx, planID); err != nil {
		ctl.cfg.Logger.Error("retry: the plan ended meanwhile and was not reopened", "plan_id", planID, "task_id", taskID, "err", err)
	}
	p, err := ctl.plans.Plan(ctx, planID)
	if err != nil {
		ctl.feeder.pushLater(planID, []string{taskID}, err)
		return nil
	}
	ctl.feeder.push(ctx, p, []string{taskID})
	return nil
}

// undoReopen settles the plan again from its tasks when requeue reopened it and then could not
// make its task PENDING (back to the status it had), and returns err.
func (ctl *control) undoReopen(planID string, reopened bool, err error) error {
	if reopened {
		ctl.settler.settleHeld(planID)
	}
	return err
}

// reopen brings an ended plan back to RUNNING, by a compare-and-set (reopened: it had
// ended); a plan that has not ended is left as it is. The caller holds the plan lock.
func (ctl *control) reopen(ctx context.Context, planID string) (reopened bool, err error) {
	_, err = ctl.updatePlan(ctx, planID, func(p *plan.Plan) error {
		if !p.Status().Terminal() {
			return errSkip
		}
		return p.Reopen()
	})
	switch {
	case errors.Is(err, errSkip):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("orchestrator: reopen plan %s: %w", planID, err)
	}
	return true, nil
}
