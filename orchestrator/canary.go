package orchestrator

import (
	"context"
	"errors"
	"fmt"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// advanceCanary judges a plan's canary wave after one of its tasks ended: a FAILED canary
// halts the plan (the rest are cancelled and never start); once every canary COMPLETED the rest
// start (then auto) or wait for an operator's approval (then approve). A canary that was
// cancelled or interrupted leaves the wave undecided until it is retried, or an operator
// approves or rejects the plan.
func (o *Orchestrator) advanceCanary(planID string) {
	ctx := context.WithoutCancel(o.ctx)
	unlock := o.planLocks.lock(planID)
	defer unlock()
	p, err := o.plans.Plan(ctx, planID)
	if err != nil {
		o.cfg.Logger.Error("judge canary wave", "plan_id", planID, "err", err)
		return
	}
	if p.Phase() != plan.PhaseCanary || p.Status().Terminal() {
		return
	}
	// Statuses, not whole tasks: a store may no longer hold ended ones whole (the Redis
	// store's mirror while Redis is away keeps only a bounded cache of them).
	ids := p.CanaryTaskIDs()
	statuses, err := o.tasks.Statuses(ctx, ids)
	if err != nil {
		o.cfg.Logger.Error("judge canary wave", "plan_id", planID, "err", err)
		return
	}
	completed := 0
	for i, st := range statuses {
		switch st {
		case task.Failed:
			who := "canary task " + ids[i] // its tenant, unless the store no longer holds it
			if failed, err := o.tasks.ByIDs(ctx, ids[i:i+1]); err == nil {
				who = "canary tenant " + failed[0].TenantID()
			}
			o.halt(ctx, p, who+" failed: plan halted")
			return
		case task.Completed:
			completed++
		}
	}
	if completed < len(ids) {
		return
	}
	promoted := false
	p, err = o.updatePlan(ctx, planID, func(p *plan.Plan) (err error) {
		if p.Phase() != plan.PhaseCanary {
			return errSkip // judged meanwhile (by another executor, or an operator)
		}
		promoted, err = p.PassCanary()
		return err
	})
	if errors.Is(err, errSkip) {
		return
	}
	if err != nil {
		o.cfg.Logger.Error("pass canary wave", "plan_id", planID, "err", err)
		return
	}
	if !promoted {
		o.cfg.Logger.Info("canary wave passed; the rest wait for approval", "plan_id", planID, "canaries", completed)
		return
	}
	o.cfg.Logger.Info("canary wave passed; the rest start", "plan_id", planID, "canaries", completed)
	if err := o.startRest(ctx, p); err != nil {
		o.cfg.Logger.Error("start the rest after the canary wave", "plan_id", planID, "err", err)
	}
}

// halt stops a plan after its canary wave for good: phase HALTED, and the tasks past the wave
// that have not started are cancelled with reason. The caller holds the plan lock.
func (o *Orchestrator) halt(ctx context.Context, p *plan.Plan, reason string) {
	id := p.ID()
	p, err := o.updatePlan(ctx, id, (*plan.Plan).Halt)
	if err != nil {
		o.cfg.Logger.Error("halt plan", "plan_id", id, "err", err)
		return
	}
	o.cfg.Logger.Warn("plan halted after its canary wave", "plan_id", p.ID(), "reason", reason)
	o.cancelQueued(p.RestTaskIDs(), reason)
}

// startRest queues the plan's PENDING tasks past its canary wave. The caller holds the plan lock.
func (o *Orchestrator) startRest(ctx context.Context, p *plan.Plan) error {
	if p.Status() == plan.Scheduled {
		return nil // begin queues them when the plan starts
	}
	rest := p.RestTaskIDs()
	statuses, err := o.tasks.Statuses(ctx, rest)
	if err != nil {
		return err
	}
	var ids []string
	for i, st := range statuses {
		if st == task.Pending {
			ids = append(ids, rest[i])
		}
	}
	o.push(ctx, p, ids)
	return nil
}

// ApprovePlan lets the tasks past a plan's canary wave start: when the wave passed and waits
// for approval, or, ending the wave early, while canaries still run.
func (o *Orchestrator) ApprovePlan(ctx context.Context, planID string) error {
	if o.draining.Load() {
		return ErrShuttingDown
	}
	unlock := o.planLocks.lock(planID)
	defer unlock()
	p, err := o.updatePlan(ctx, planID, (*plan.Plan).Approve)
	if err != nil {
		return err
	}
	if err := o.startRest(ctx, p); err != nil {
		return fmt.Errorf("orchestrator: approve plan %s: %w", planID, err)
	}
	return nil
}

// rejectedAtGate is the last error of the tasks a rejection of the canary gate cancelled.
var rejectedAtGate = "rejected at the canary gate: plan halted"

// RejectPlan halts a plan at its canary gate: the tasks past the wave never start (they are
// cancelled); canaries still running finish.
func (o *Orchestrator) RejectPlan(ctx context.Context, planID string) error {
	unlock := o.planLocks.lock(planID)
	p, err := o.updatePlan(ctx, planID, (*plan.Plan).Halt)
	if err != nil {
		unlock()
		return err
	}
	o.cancelQueued(p.RestTaskIDs(), rejectedAtGate)
	unlock()
	o.settle(planID)
	return nil
}
