package orchestrator

import (
	"context"
	"errors"
	"fmt"

	"github.com/executor-dev/executor/domain/plan"
)

// settle sets a plan's status from its tasks when every task has ended (outcome.end): FAILED
// if some failed or were interrupted, else COMPLETED if some completed (with exceptions when
// others were cancelled or skipped), else CANCELLED. Tasks
// still PENDING, RUNNING, PAUSED or WAITING keep the plan as it is; an ended plan's queue is
// closed. A plan paused because an executor was lost is left for an SRE, and so is one with
// an INTERRUPTED task still claimed: its run's loss is being judged (the reconciler pauses the
// plan before it frees the claim), or its run is ending (it settles the plan once its slot is
// freed).
//
// A settle made while the store runs degraded (Redis away) decides from this executor's
// copies, which may be stale (another executor may have ended the plan's other tasks
// meanwhile), and its write may lose at the write-back; one that failed decided nothing. Such
// plans are remembered and settled again once Redis answers (resettle.go).
func (s *settler) settle(planID string) {
	unlock := s.planLocks.lock(planID)
	defer unlock()
	s.settleHeld(planID)
}

// settleHeld is settle for a caller that holds the plan lock.
func (s *settler) settleHeld(planID string) {
	if s.cfg.Shared && s.degraded() {
		// This executor's copies of the plan's other tasks may be stale (they may have been
		// retried or cancelled on another executor): the plan is settled from Redis once it
		// answers, never ended from memory.
		s.markResettle(planID)
		return
	}
	err := s.settleFromTasks(planID)
	if err != nil {
		s.cfg.Logger.Error("settle plan", "plan_id", planID, "err", err)
	}
	if s.degraded() || (err != nil && !errors.Is(err, plan.ErrNotFound)) {
		s.markResettle(planID)
	}
}

// settleFromTasks is settle's decision and write, under the plan lock.
func (s *settler) settleFromTasks(planID string) error {
	ctx := context.WithoutCancel(s.ctx)
	p, err := s.plans.Plan(ctx, planID)
	if err != nil {
		return fmt.Errorf("orchestrator: settle plan %s: %w", planID, err)
	}
	if p.Status().Terminal() {
		s.witnesses.forget(planID)
		s.feeder.closeQueue(ctx, planID) // settled before; its queue may have outlived it
		return nil
	}
	if p.Status() == plan.Scheduled || pausedForLoss(p) {
		return nil
	}
	if p.Rollout().Enabled() && p.Ring().Phase == plan.RingRunning {
		// The ring's completion is judged here, once the plan's queue is empty (its last end,
		// on any executor; or the reconciler freeing the slot of an executor that died after
		// the end): the next ring starts, or the last one passes before the plan settles.
		s.rollout.judgeRing(ctx, p)
	}
	statuses, open, err := s.planStatuses(ctx, planID, p.TaskIDs())
	if err != nil || open {
		if err != nil {
			return fmt.Errorf("orchestrator: settle plan %s: %w", planID, err)
		}
		return nil
	}
	if s.missingTooSoon(planID, statuses) {
		return nil
	}
	o, err := settledOutcome(statuses, p.TaskIDs())
	if err != nil {
		return fmt.Errorf("orchestrator: settle plan %s: %w", planID, err)
	}
	if judged, err := s.claimedAny(ctx, planID, o.interrupted); err != nil || judged {
		return err
	}
	_, err = s.updatePlan(ctx, planID, func(p *plan.Plan) error {
		if p.Status().Terminal() || p.Status() == plan.Scheduled || pausedForLoss(p) {
			return errSkip // settled meanwhile (by another executor), or paused for a lost executor
		}
		return o.end(p, s.now())
	})
	if err != nil && !errors.Is(err, errSkip) {
		return fmt.Errorf("orchestrator: settle plan %s: %w", planID, err)
	}
	s.signal(ctx, sigPlan, planID) // the executors waiting on it read it again
	s.feeder.closeQueue(ctx, planID)
	return nil
}

// claimedAny reports whether one of ids (INTERRUPTED tasks of planID) is still claimed in the
// shared Queue. While degraded the claims cannot be read, and nothing judges a loss meanwhile
// (the plan is settled again from Redis once it answers).
func (s *settler) claimedAny(ctx context.Context, planID string, ids []string) (bool, error) {
	if len(ids) == 0 || s.degraded() {
		return false, nil
	}
	claims, err := s.queue.InFlight(ctx, planID)
	if err != nil {
		return false, fmt.Errorf("orchestrator: settle plan %s: claims: %w", planID, err)
	}
	for _, id := range ids {
		if _, ok := claims[id]; ok {
			return true, nil
		}
	}
	return false, nil
}
