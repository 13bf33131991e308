package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/executor-dev/executor/domain/errcode"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// judgeFailures judges the current ring of a rolling plan after one of its tasks ended
// FAILED: when the ring's failed tasks cross its failure budget the plan halts (running tasks
// finish, nothing new starts). The ring's completion is judged when the plan's queue is empty,
// by the settle that follows (settleFromTasks judges the ring first): while the ring's tasks
// are queued or claimed it cannot be complete, and judging it at every end read the plan and a
// status under the plan lock (4 times slower at 10,000 tenants). A failed task of an earlier
// ring (retried) has the current ring judged: a read, nothing else.
func (ro *rollout) judgeFailures(planID string) {
	ctx := context.WithoutCancel(ro.ctx)
	unlock := ro.planLocks.lock(planID)
	defer unlock()
	p, err := ro.plans.Plan(ctx, planID)
	if err != nil {
		ro.cfg.Logger.Error("judge ring", "plan_id", planID, "err", err)
		return
	}
	cur := p.Ring()
	if p.Status().Terminal() || cur.Phase != plan.RingRunning || cur.Waived {
		return // judged meanwhile, or its budget waived by an operator
	}
	ids := p.RingTaskIDs(cur.Index)
	statuses, err := ro.tasks.Statuses(ctx, ids)
	if err != nil {
		ro.cfg.Logger.Error("judge ring", "plan_id", planID, "ring", cur.Index, "err", err)
		return
	}
	ro.overBudget(ctx, p, ids, statuses)
}

// judgeRing completes the plan's current RUNNING ring when every task of it ended, COMPLETED
// or FAILED within its budget (over it, the plan halts). The caller holds the plan lock.
func (ro *rollout) judgeRing(ctx context.Context, p *plan.Plan) {
	cur := p.Ring()
	ids := p.RingTaskIDs(cur.Index)
	statuses, open, err := ro.settler.planStatuses(ctx, p.ID()+"#ring", ids)
	if err != nil {
		ro.cfg.Logger.Error("judge ring", "plan_id", p.ID(), "ring", cur.Index, "err", err)
		return
	}
	if open || count(statuses, task.Completed)+countWhere(statuses, task.Status.Failure) < len(ids) {
		return
	}
	// Judged again on every status: a failure whose own judgement comes after this one (its
	// run ended first, then this task's) is counted here.
	if !cur.Waived && ro.overBudget(ctx, p, ids, statuses) {
		return
	}
	ro.completeRing(ctx, p, cur.Index)
}

// overBudget halts the plan when the failed tasks of its current ring (ids, with statuses)
// cross the ring's failure budget, and reports whether it did. The caller holds the plan lock.
func (ro *rollout) overBudget(ctx context.Context, p *plan.Plan, ids []string, statuses []task.Status) bool {
	ring := p.Ring().Index
	budget := p.Rollout().Budget(ring)
	n := countWhere(statuses, task.Status.Failure) // a tenant rolled back did not deploy either
	if !budget.Exceeded(n, len(ids)) {
		return false
	}
	ro.haltRing(ctx, p, fmt.Sprintf("ring %d (%s): %d of %d tenants failed (%s), over its failure budget of %s",
		ring, p.Rollout().Waves[ring].Name, n, len(ids), ro.failedTenants(ctx, ids, statuses), budget))
	return true
}

// completeRing records that ring's tasks all ended within its budget, and acts on what
// follows: a bake scheduled, or the next ring started. The caller holds the plan lock.
func (ro *rollout) completeRing(ctx context.Context, p *plan.Plan, ring int) {
	ro.logRing(p.ID(), ro.ringStep(ctx, p.ID(), "complete ring", func(p *plan.Plan) (bool, error) {
		if p.Ring().Index != ring || p.Ring().Phase != plan.RingRunning {
			return false, errSkip
		}
		return p.RingCompleted(ring, ro.now())
	}))
}

// logRing logs a ring transition the executor made on its own that failed.
func (ro *rollout) logRing(planID string, err error) {
	if err != nil {
		ro.cfg.Logger.Error("rollout", "plan_id", planID, "err", err)
	}
}

// ringStep applies a ring transition to the plan as stored (a compare-and-set), then acts on
// where the plan stands: a BAKING ring's end scheduled; a ring that started has its PENDING
// tasks queued (an empty ring completes at once). It returns the transition's error (none
// for errSkip: judged meanwhile). The caller holds the plan lock.
func (ro *rollout) ringStep(ctx context.Context, planID, what string, step func(p *plan.Plan) (bool, error)) error {
	for {
		started := false
		p, err := ro.updatePlan(ctx, planID, func(p *plan.Plan) (err error) {
			started, err = step(p)
			return err
		})
		if errors.Is(err, errSkip) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("orchestrator: %s: %w", what, err)
		}
		r := p.Ring()
		ro.cfg.Logger.Info("rollout: "+what, "plan_id", planID, "ring", r.Index, "wave", p.Rollout().Waves[r.Index].Name, "phase", r.Phase)
		switch r.Phase {
		case plan.RingBaking:
			ro.scheduleAt(ctx, p, p.NextBakeStep())
			return nil
		case plan.RingChecking:
			if !ro.check(ctx, p) {
				return nil
			}
			ring := r.Index
			what, step = "health check passed", func(p *plan.Plan) (bool, error) {
				if p.Ring().Index != ring || p.Ring().Phase != plan.RingChecking {
					return false, errSkip
				}
				return p.CheckPassed(ring, ro.now())
			}
			continue
		}
		if !started {
			return nil
		}
		if len(p.RingTaskIDs(r.Index)) > 0 {
			if err := ro.queuePending(ctx, p, p.RingTaskIDs(r.Index)); err != nil {
				return fmt.Errorf("orchestrator: start ring %d of plan %s: %w", r.Index, planID, err)
			}
			ro.judgeRing(ctx, p) // a ring whose tasks all ended already (retried early) has no end to come
			return nil
		}
		ring := r.Index // empty: it completed as it started
		what, step = "complete empty ring", func(p *plan.Plan) (bool, error) {
			if p.Ring().Index != ring || p.Ring().Phase != plan.RingRunning {
				return false, errSkip
			}
			return p.RingCompleted(ring, ro.now())
		}
	}
}

// scheduleAt hands the plan to the Scheduler for at: the end of its ring's bake, or the time
// by which its ring's check is over (shared through Redis: any executor acts on it, at its
// recorded time, after a restart too).
func (ro *rollout) scheduleAt(ctx context.Context, p *plan.Plan, at time.Time) {
	if ro.cfg.Scheduler == nil {
		ro.cfg.Logger.Error("rollout: no scheduler to bake a ring", "plan_id", p.ID())
		return
	}
	if err := ro.cfg.Scheduler.Schedule(ctx, p.ID(), at); err != nil {
		ro.cfg.Logger.Error("rollout: schedule the plan's next ring step", "plan_id", p.ID(), "at", at, "err", err)
	}
}

// ringDue acts on a rolling plan the Scheduler handed back (StartScheduled): a bake that is
// over ends (too early, it is scheduled again); a check that should be over and is not (its
// executor died during it) is made again. The caller holds the plan lock.
func (ro *rollout) ringDue(ctx context.Context, p *plan.Plan) {
	switch p.Ring().Phase {
	case plan.RingChecking:
		ro.recheck(ctx, p)
	case plan.RingBaking:
		ro.bake(ctx, p)
	}
}

// endBake ends the BAKING ring's bake, when it is over and its analyses measured its end;
// else it schedules the next step (a measurement, or the end). The caller holds the plan lock.
func (ro *rollout) endBake(ctx context.Context, p *plan.Plan) {
	if now := ro.now(); now.Before(p.BakeEnds()) || len(p.AnalysesDue(now)) > 0 {
		ro.scheduleAt(ctx, p, p.NextBakeStep())
		return
	}
	ring := p.Ring().Index
	ro.logRing(p.ID(), ro.ringStep(ctx, p.ID(), "bake over", func(p *plan.Plan) (bool, error) {
		if p.Ring().Index != ring || p.Ring().Phase != plan.RingBaking {
			return false, errSkip
		}
		return p.BakeOver(ring, ro.now())
	}))
}

// recheck makes the CHECKING ring's check again once it should have been over. The caller
// holds the plan lock.
func (ro *rollout) recheck(ctx context.Context, p *plan.Plan) {
	if by := p.Ring().Since.Add(checkTimeout(p) + checkGrace); ro.now().Before(by) {
		ro.scheduleAt(ctx, p, by)
		return
	}
	was := p.Ring()
	ro.logRing(p.ID(), ro.ringStep(ctx, p.ID(), "check again", func(p *plan.Plan) (bool, error) {
		if p.Ring() != was {
			return false, errSkip
		}
		return false, p.RecheckRing(was.Index, ro.now())
	}))
}

// haltRing halts the plan's current ring: nothing new starts (its queued tasks are taken
// out of the queue and stay PENDING); running tasks finish. The caller holds the plan lock.
func (ro *rollout) haltRing(ctx context.Context, p *plan.Plan, why string) {
	id, ring := p.ID(), p.Ring().Index
	p, err := ro.updatePlan(ctx, id, func(p *plan.Plan) error {
		if p.Ring().Index != ring {
			return errSkip
		}
		return p.HaltRing(ring, why, ro.now())
	})
	if errors.Is(err, errSkip) {
		return
	}
	if err != nil {
		ro.cfg.Logger.Error("halt ring", "plan_id", id, "err", err)
		return
	}
	ro.cfg.Logger.Warn("rollout halted", "plan_id", id, "ring", ring, "reason", why)
	ro.feeder.unqueue(ctx, id, p.TaskIDs()[:p.Rollout().Bounds[ring+1]])
}

// queuePending queues those of ids that are PENDING.
func (ro *rollout) queuePending(ctx context.Context, p *plan.Plan, ids []string) error {
	if p.Status() == plan.Scheduled {
		return nil // begin queues them when the plan starts
	}
	statuses, err := ro.tasks.Statuses(ctx, ids)
	if err != nil {
		return err
	}
	var pending []string
	for i, st := range statuses {
		if st == task.Pending {
			pending = append(pending, ids[i])
		}
	}
	ro.feeder.push(ctx, p, pending)
	return nil
}

// maxNamedFailures bounds the failed tenants a halt's reason names.
const maxNamedFailures = 5

// failedTenants names the first tenants of ids that failed (FAILED, rolled back) (statuses in the same order).
func (ro *rollout) failedTenants(ctx context.Context, ids []string, statuses []task.Status) string {
	var failed []string
	for i, st := range statuses {
		if st.Failure() && len(failed) < maxNamedFailures {
			failed = append(failed, ids[i])
		}
	}
	tasks, err := ro.tasks.ByIDs(ctx, failed)
	if err != nil {
		return "task " + strings.Join(failed, ", ")
	}
	names := make([]string, len(tasks))
	for i, t := range tasks {
		names[i] = t.TenantID()
	}
	if n := countWhere(statuses, task.Status.Failure); n > len(names) {
		names = append(names, fmt.Sprintf("and %d more", n-len(names)))
	}
	return strings.Join(names, ", ")
}

// count returns how many of statuses are st.
func count(statuses []task.Status, st task.Status) int {
	return countWhere(statuses, func(s task.Status) bool { return s == st })
}

// countWhere returns how many of statuses rule accepts.
func countWhere(statuses []task.Status, rule func(task.Status) bool) int {
	n := 0
	for _, s := range statuses {
		if rule(s) {
			n++
		}
	}
	return n
}

// ApprovePlan is an operator's approval of a rolling plan's current ring
// (plan.ApproveRing): the next ring starts, or a halted ring goes on.
//
// When the plan's approvers rule asks for several approvals, one short of the count is only
// recorded (plan.CountApproval): the ring does not move.
func (ro *rollout) ApprovePlan(ctx context.Context, planID string, d stage.Decision) error {
	if ro.draining.Load() {
		return errcode.ErrShuttingDown
	}
	unlock := ro.planLocks.lock(planID)
	defer unlock()
	for counted := false; ; {
		err := ro.ringStep(ctx, planID, "approve", func(p *plan.Plan) (bool, error) { return p.ApproveRing(d, ro.now()) })
		if !errors.Is(err, plan.ErrMoreApprovals) || counted {
			if err != nil {
				return err
			}
			break
		}
		// Another approval may have made the count meanwhile: approve on then.
		_, err = ro.updatePlan(ctx, planID, func(p *plan.Plan) error { return p.CountApproval(d, ro.now()) })
		if !errors.Is(err, plan.ErrEnoughApprovals) {
			return err
		}
		counted = true
	}
	p, err := ro.plans.Plan(ctx, planID)
	if err != nil {
		return fmt.Errorf("orchestrator: approve plan %s: %w", planID, err)
	}
	if p.Ring().Phase == plan.RingRunning && p.Ring().Waived { // a halted ring goes on
		if err := ro.queuePending(ctx, p, p.RingTaskIDs(p.Ring().Index)); err != nil {
			return fmt.Errorf("orchestrator: approve plan %s: %w", planID, err)
		}
		ro.judgeRing(ctx, p) // its tasks may all have ended: no end to come would judge it
	}
	return nil
}

// rejectedAtGate is the last error of the tasks a rejection cancelled.
var rejectedAtGate = "rejected at the rollout's gate: plan halted"

// RejectPlan is an operator's rejection of a rolling plan: the tasks that have not started
// (the current ring's and every later ring's) are cancelled; running tasks finish.
func (ro *rollout) RejectPlan(ctx context.Context, planID string, d stage.Decision) error {
	unlock := ro.planLocks.lock(planID)
	p, err := ro.updatePlan(ctx, planID, func(p *plan.Plan) error { return p.RejectRing(d, ro.now()) })
	if err != nil {
		unlock()
		return err
	}
	ro.feeder.unqueue(ctx, planID, p.TaskIDs()[p.Rollout().Bounds[p.Ring().Index]:])
	ro.cancelQueued(p.TaskIDs()[p.Rollout().Bounds[p.Ring().Index]:], rejectedAtGate)
	unlock()
	ro.settler.settle(planID)
	return nil
}
