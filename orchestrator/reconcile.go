package orchestrator

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// reconcileEvery is how often, at most, the reconciler looks at the claimed tasks of every
// plan with work (it runs every LeaseTTL/4 within that bound).
const reconcileEvery = 5 * time.Second

// reconcile looks, on a shared Queue, at every claimed task whose claimer is gone, until
// Stop: see reconcileOnce. It is the scan that finds an executor's loss.
func (rec *recovery) reconcile() {
	defer close(rec.reconciled)
	if !rec.queue.Shared() {
		return // one process: every claim is this executor's own and ends with its run
	}
	every := min(rec.cfg.LeaseTTL/4, reconcileEvery)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-rec.stopClaims:
			return
		}
		ctx, cancel := context.WithTimeout(rec.ctx, persistTimeout)
		if err := rec.reconcileOnce(ctx); err != nil {
			rec.cfg.Logger.Debug("reconcile claims", "err", err)
		}
		cancel()
	}
}

// reconcileOnce frees the slots of claims whose claimer is gone, so that no tenant is
// stranded:
//   - a claimed task still PENDING (its claimer died, or the claim's reply was lost, before
//     the run started) goes back to the front of its plan's queue: it never started;
//   - a claimed task RUNNING whose claimer is dead is reaped (INTERRUPTED, as a reader
//     would), its slot freed, and its plan PAUSED with a reason naming the executor and the
//     interrupted tenants: started work is never re-run without an operator;
//   - a claimed task that has ended (its claimer died between its end and freeing the slot)
//     has its slot freed.
//
// Nothing is judged while this executor's own liveness lapsed lately (a stalled Redis lapses
// every executor's alike), nor a claim of a live executor younger than a lease TTL.
func (rec *recovery) reconcileOnce(ctx context.Context) error {
	if rec.degraded() || rec.cfg.Cluster == nil {
		return nil
	}
	if steady, err := rec.cfg.Cluster.Steady(ctx, rec.cfg.LeaseTTL); err != nil || !steady {
		return err
	}
	plans, err := rec.queue.Plans(ctx)
	if err != nil {
		return err
	}
	for _, planID := range plans {
		if err := rec.reconcilePlan(ctx, planID); err != nil {
			return fmt.Errorf("plan %s: %w", planID, err)
		}
	}
	return nil
}

// reconcilePlan is reconcileOnce for one plan. The claims of runs lost with their executor
// are released only once the plan is paused for the loss: while such a claim is held, no
// settle ends the plan (settleFromTasks), so a settle running on another executor between the
// interruption and the pause cannot end the plan FAILED.
func (rec *recovery) reconcilePlan(ctx context.Context, planID string) error {
	claims, err := rec.queue.InFlight(ctx, planID)
	if err != nil {
		return err
	}
	var lost []string // claims of runs lost with their executor: released once the plan is paused
	freed := false
	for id, c := range claims {
		if rec.local(id) != nil || rec.now().Sub(c.Since) < rec.cfg.LeaseTTL {
			continue // running here, or too fresh to judge (its run may be starting)
		}
		if c.Executor != rec.cfg.Name {
			alive, err := rec.cfg.Cluster.AliveSince(ctx, c.Executor, c.Since)
			if err != nil || alive {
				continue
			}
		}
		t, err := rec.tasks.Task(ctx, id)
		if errors.Is(err, task.ErrNotFound) {
			_, err = rec.queue.Release(ctx, planID, id)
			freed = freed || err == nil
			continue
		}
		if err != nil {
			return err
		}
		switch t.Status() {
		case task.Pending:
			if err := rec.queue.Return(ctx, planID, id); err != nil {
				return err
			}
			rec.cfg.Logger.Warn("claimed task handed back: its claimer is gone", "plan_id", planID, "task_id", id,
				"tenant_id", t.TenantID(), "executor", c.Executor)
		case task.Running:
			reaped, err := rec.reap(ctx, t)
			if err != nil {
				return err
			}
			if reaped == nil {
				continue // its owner still holds the lease, or beat lately: not yet
			}
			t = reaped
			fallthrough
		default:
			if ownerLost(t) {
				if len(lost) == 0 {
					// Started work was lost: nothing more of the plan starts (its freed
					// slot included) until an SRE decides.
					if err := rec.queue.SetPaused(ctx, planID, true); err != nil {
						return err
					}
				}
				lost = append(lost, id)
				continue
			}
			if _, err := rec.queue.Release(ctx, planID, id); err != nil {
				return err
			}
			freed = true
		}
	}
	if len(lost) > 0 {
		if err := rec.pauseForLoss(ctx, planID); err != nil {
			return err // the claims stay: the next round pauses it again
		}
		for _, id := range lost {
			if err := rec.releaseLost(ctx, planID, id); err != nil {
				return err
			}
		}
		return nil
	}
	if freed {
		if q, c, err := rec.queue.Len(ctx, planID); err == nil && q+c == 0 {
			rec.settler.settle(planID)
		}
	}
	return nil
}

// releaseLost frees the slot of a lost run's claim once its plan is paused: released, or
// handed back to the front of the queue if an SRE retried the task meanwhile (PENDING: a push
// does not add a task still claimed).
func (rec *recovery) releaseLost(ctx context.Context, planID, id string) error {
	t, err := rec.tasks.Task(ctx, id)
	if err != nil && !errors.Is(err, task.ErrNotFound) {
		return err
	}
	if err == nil && t.Status() == task.Pending {
		return rec.queue.Return(ctx, planID, id)
	}
	_, err = rec.queue.Release(ctx, planID, id)
	return err
}

// pauseForLoss pauses a plan whose runs were lost with their executor, with a reason naming
// the executors and every interrupted tenant whose owner was lost (lease_lost): nothing of it
// starts until an SRE decides (plan resume continues the never-started tenants, plan retry
// --from-checkpoint the interrupted ones), and no settle ends it meanwhile, however few of its
// tasks are left. A plan already paused for a loss has its reason brought up to date; an
// operator's pause or an ended plan stands. It fails only when the plan could not be read or
// written (logged).
func (rec *recovery) pauseForLoss(ctx context.Context, planID string) error {
	unlock := rec.planLocks.lock(planID)
	defer unlock()
	p, err := rec.plans.Plan(ctx, planID)
	if err != nil {
		rec.cfg.Logger.Error("pause a plan whose executor was lost", "plan_id", planID, "err", err)
		return fmt.Errorf("orchestrator: pause plan %s for a lost executor: %w", planID, err)
	}
	tasks, err := rec.tasks.ByIDs(ctx, p.TaskIDs())
	if err != nil {
		rec.cfg.Logger.Error("pause a plan whose executor was lost", "plan_id", planID, "err", err)
		return fmt.Errorf("orchestrator: pause plan %s for a lost executor: %w", planID, err)
	}
	execs, tenants := map[string]bool{}, map[string]bool{}
	for _, t := range tasks {
		if ownerLost(t) {
			execs[cmp.Or(t.Executor(), "unknown")], tenants[t.TenantID()] = true, true
		}
	}
	if len(tenants) == 0 {
		return nil // retried meanwhile: nothing to decide
	}
	reason := fmt.Sprintf("executor %s lost mid-plan; interrupted tenants: %s", joinKeys(execs), joinKeys(tenants))
	_, err = rec.updatePlan(ctx, planID, func(p *plan.Plan) error {
		if p.Reason() == reason || (p.Status() != plan.Running && !pausedForLoss(p)) {
			return errSkip // an operator's status stands
		}
		return p.PauseFor(reason, rec.now())
	})
	if errors.Is(err, errSkip) {
		return nil
	}
	if err != nil {
		rec.cfg.Logger.Error("pause a plan whose executor was lost", "plan_id", planID, "err", err)
		return fmt.Errorf("orchestrator: pause plan %s for a lost executor: %w", planID, err)
	}
	if err := rec.queue.SetPaused(ctx, planID, true); err != nil {
		rec.cfg.Logger.Error("pause a plan's queue", "plan_id", planID, "err", err)
	}
	rec.signal(ctx, sigPlan, planID)
	rec.cfg.Logger.Warn("plan paused: "+reason, "plan_id", planID)
	return nil
}

// pausedForLoss reports whether p was PAUSED by the executors because an executor running its
// tasks was lost (a pause with a reason): it waits for an SRE, never settled.
func pausedForLoss(p *plan.Plan) bool {
	return p.Status() == plan.Paused && p.Reason() != ""
}

// ownerLost reports whether t was interrupted because its run's owner was lost (reaped or
// unlocked: class lease_lost), not by a clean stop (class shutdown).
func ownerLost(t *task.Task) bool {
	f := t.LastError()
	return t.Status() == task.Interrupted && f != nil && f.Class == stage.ClassLeaseLost
}

func joinKeys(m map[string]bool) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}
