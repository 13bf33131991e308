package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/executor-dev/executor/domain/plan"
)

// Launch starts a newly created plan: at once (p then reads as started), or, when it is
// SCHEDULED, by handing it to the Scheduler, which calls StartScheduled at its startAt.
// A plan launched as a shutdown begins starts with every task INTERRUPTED (see enqueue). A
// plan no longer PENDING was launched meanwhile (a replayed submission's Relaunch won the
// race with the submission's own launch): it is left as it is, and p reads as it stands.
func (ctl *control) Launch(ctx context.Context, p *plan.Plan) error {
	if p.Status() == plan.Scheduled {
		if ctl.cfg.Scheduler == nil {
			return ErrNoScheduler
		}
		if err := ctl.cfg.Scheduler.Schedule(ctx, p.ID(), p.StartAt()); err != nil {
			return fmt.Errorf("orchestrator: schedule plan %s: %w", p.ID(), err)
		}
		return nil
	}
	unlock := ctl.planLocks.lock(p.ID())
	defer unlock()
	started, err := ctl.begin(ctx, p.ID(), func(cur *plan.Plan, _ time.Time) error {
		if cur.Status() != plan.Pending {
			return errSkip
		}
		return nil
	})
	if errors.Is(err, errSkip) {
		started, err = ctl.plans.Plan(ctx, p.ID())
	}
	if err != nil {
		return err
	}
	*p = *started // the caller (the submission's answer) sees the plan as started
	return nil
}

// begin starts a plan by a compare-and-set: release (when it applies, a SCHEDULED plan is
// made PENDING first; errSkip when the plan needs no start any more), then RUNNING, and its
// tasks queued (of a rolling plan, those of its rings that may start). The caller holds the plan
// lock.
func (ctl *control) begin(ctx context.Context, planID string, release func(p *plan.Plan, now time.Time) error) (*plan.Plan, error) {
	p, err := ctl.updatePlan(ctx, planID, func(p *plan.Plan) error {
		if err := release(p, ctl.now()); err != nil {
			return err
		}
		return p.Start(ctl.now())
	})
	if err != nil {
		return nil, fmt.Errorf("orchestrator: start plan %s: %w", planID, err)
	}
	ids := p.StartableTaskIDs()
	ctl.feeder.push(ctx, p, ids)
	return p, nil
}
