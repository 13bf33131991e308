package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/executor-dev/executor/domain/errcode"
	"github.com/executor-dev/executor/domain/plan"
)

// ErrNoScheduler: a plan with a startAt in the future was launched on an orchestrator
// configured without a Scheduler.
var ErrNoScheduler = errors.New("orchestrator: no scheduler to start scheduled plans")

// StartScheduled starts a SCHEDULED plan whose time has come, or ends the bake of a rolling
// plan's ring; the Scheduler calls it. It returns
// nil once the plan needs no start any more: started here, or cancelled or started already
// (by another executor's claim of the same entry). An error leaves the entry to the scheduler,
// which tries again: a store error, or a shutdown (another executor, or this one once
// restarted, starts the plan).
func (ctl *control) StartScheduled(ctx context.Context, planID string) error {
	if ctl.draining.Load() {
		return errcode.ErrShuttingDown
	}
	unlock := ctl.planLocks.lock(planID)
	defer unlock()
	p, err := ctl.plans.Plan(ctx, planID)
	if errors.Is(err, plan.ErrNotFound) {
		ctl.cfg.Logger.Warn("scheduled plan not found", "plan_id", planID)
		return nil
	}
	if err != nil {
		return fmt.Errorf("orchestrator: start scheduled plan %s: %w", planID, err)
	}
	if p.Status() != plan.Scheduled {
		if p.Rollout().Enabled() && !p.Status().Terminal() {
			ctl.rollout.ringDue(ctx, p) // the Scheduler holds a rolling plan's bake end too
		}
		return nil
	}
	late := ctl.now().Sub(p.StartAt())
	_, err = ctl.begin(ctx, planID, func(p *plan.Plan, _ time.Time) error {
		if p.Status() != plan.Scheduled {
			return errSkip // cancelled or started meanwhile
		}
		return p.Release()
	})
	if errors.Is(err, errSkip) {
		return nil
	}
	if err != nil {
		return err
	}
	ctl.cfg.Metrics.ScheduledStart(late)
	ctl.cfg.Logger.Info("scheduled plan started", "plan_id", planID, "start_at", p.StartAt(), "late_ms", late.Milliseconds())
	return nil
}

// unschedule forgets a SCHEDULED plan being cancelled. Should the scheduler not answer, the
// entry stays: when it comes due, StartScheduled finds the plan CANCELLED and starts nothing.
func (ctl *control) unschedule(ctx context.Context, p *plan.Plan) {
	if p.Status() != plan.Scheduled || ctl.cfg.Scheduler == nil {
		return
	}
	if _, err := ctl.cfg.Scheduler.Unschedule(ctx, p.ID()); err != nil {
		ctl.cfg.Logger.Warn("unschedule cancelled plan", "plan_id", p.ID(), "err", err)
	}
}
