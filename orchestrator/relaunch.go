package orchestrator

import (
	"context"
	"fmt"

	"github.com/executor-dev/executor/domain/plan"
)

// Relaunch makes sure a plan that was created, and maybe started, by a submission whose
// executor died before it finished launching it (a kill -9 between the creation and the push
// of its tasks) runs: a PENDING plan is launched; a RUNNING or PAUSED one whose tasks are
// neither queued nor claimed in the shared Queue has its PENDING tasks queued again, there
// only (a push is idempotent: a task queued or claimed already is not added twice). An ended
// or SCHEDULED plan is left as it is, and so is any plan on an in-process Queue. A replayed
// submission (its idempotency key seen before) calls it, so that a client that retries after
// the executor it talked to died gets its plan running.
func (ctl *control) Relaunch(ctx context.Context, planID string) error {
	p, err := ctl.plans.Plan(ctx, planID)
	if err != nil {
		return fmt.Errorf("orchestrator: relaunch plan %s: %w", planID, err)
	}
	switch p.Status() {
	case plan.Pending:
		return ctl.Launch(ctx, p)
	case plan.Running, plan.Paused:
		if !ctl.queue.Shared() {
			return nil // one process: its launch ran to its end, or died with the process
		}
		queued, claimed, err := ctl.queue.Len(ctx, planID)
		if err != nil || queued+claimed > 0 {
			return err // its tasks are in the queue: the launch reached it
		}
		return ctl.feeder.requeuePlan(ctx, p)
	default:
		return nil
	}
}
