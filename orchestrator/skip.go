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
// settled again: a FAILED plan is reopened first, for the task skipped may be what failed it
// (a plan whose failed tenants an operator skipped completes, with exceptions). A plan an
// operator cancelled stays CANCELLED.
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
	_, err = ctl.updatePlan(ctx, planID, func(p *plan.Plan) error {
		if p.Status() != plan.Failed {
			return errSkip
		}
		return p.Reopen()
	})
	if err != nil && !errors.Is(err, errSkip) {
		return fmt.Errorf("orchestrator: skip task %s: reopen plan %s: %w", taskID, planID, err)
	}
	ctl.settler.settleHeld(planID)
	return nil
}
