package orchestrator

import (
	"context"
	"sync"
	"time"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
)

// Dispatch timing.
const (
	dispatchFallback = time.Second            // a claim round at least this often, woken or not
	plansRefresh     = 200 * time.Millisecond // the plans with work are listed again at most this often
	queueRetry       = 250 * time.Millisecond // after a failed queue call
)

// planHere is what this executor keeps of a plan while it runs tasks of it: dropped when its
// last run here ends, so memory follows the runs, not the plans ever seen.
type planHere struct {
	renderer *stage.Renderer
	once     sync.Once
	canary   map[string]bool // the canary wave's task ids (none without a wave)
	runs     int             // guarded by Orchestrator.mu
}

// dispatch claims tasks from the Queue while a worker slot is free and runs each, until
// halted: one loop per executor, over every plan with work (round robin, so one plan does not
// starve the others). It waits for a wake (a push, an end, an unpause, on any executor), the
// start rate's wait, or the fallback period.
func (o *Orchestrator) dispatch() {
	defer close(o.dispatched)
	var plans []string
	var listed time.Time
	next := 0
	for {
		select {
		case o.slots <- struct{}{}:
		case <-o.stopClaims:
			return
		}
		o.pushPending()
		if time.Since(listed) >= plansRefresh {
			if ps, err := o.queue.Plans(o.ctx); err == nil {
				plans, listed = ps, time.Now()
			} else {
				o.cfg.Logger.Debug("list plans with work", "err", err)
			}
		}
		planID, id, wait, err := o.claimNext(plans, &next)
		if id != "" {
			o.wg.Add(1)
			go o.runClaimed(planID, id)
			continue
		}
		<-o.slots
		d := dispatchFallback
		switch {
		case err != nil:
			d = queueRetry
		case wait > 0 && wait < d:
			d = wait
		}
		t := time.NewTimer(d)
		select {
		case <-o.queue.Woken():
		case <-o.poke:
			listed = time.Time{}
		case <-t.C:
			listed = time.Time{}
		case <-o.stopClaims:
			t.Stop()
			return
		}
		t.Stop()
	}
}

// claimNext claims one task from the first of plans (from *next on) that lets one start; it
// also returns the shortest start-rate wait it met.
func (o *Orchestrator) claimNext(plans []string, next *int) (planID, id string, wait time.Duration, err error) {
	for k := range plans {
		i := (*next + k) % len(plans)
		id, w, err := o.queue.Claim(o.ctx, plans[i], o.cfg.Name)
		if err != nil {
			o.cfg.Logger.Debug("claim a task", "plan_id", plans[i], "err", err)
			return "", "", 0, err
		}
		if id != "" {
			*next = (i + 1) % len(plans)
			return plans[i], id, 0, nil
		}
		if w > 0 && (wait == 0 || w < wait) {
			wait = w
		}
	}
	return "", "", wait, nil
}

// runClaimed runs a claimed task, then tells the Queue how its run ended: the slot is freed
// (or the task handed back), the failure budget counted, and the plan settled when nothing of
// it is left queued or claimed.
func (o *Orchestrator) runClaimed(planID, id string) {
	defer o.wg.Done()
	ph := o.enter(planID)
	defer o.leave(planID)
	end := o.runTask(ph, id)
	<-o.slots
	if ph.canary[id] { // before the slot is freed: the plan must not settle before its wave is judged
		o.advanceCanary(planID)
	}
	o.finish(planID, id, end)
}

// finish tells the Queue how the run of a claimed task ended.
func (o *Orchestrator) finish(planID, id string, end runEnd) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(o.ctx), persistTimeout)
	defer cancel()
	if end == endHandedBack {
		if err := o.queue.Return(ctx, planID, id); err != nil {
			o.cfg.Logger.Error("hand a task back to its plan's queue", "plan_id", planID, "task_id", id, "err", err)
		}
		return
	}
	drained, left, err := o.queue.Done(ctx, planID, id, end == endFailed)
	if err != nil {
		// The claim stays under this executor's name until the reconciler releases it.
		o.cfg.Logger.Warn("free a task's slot", "plan_id", planID, "task_id", id, "err", err)
		return
	}
	if len(drained) > 0 {
		o.cancelQueued(drained, "failure budget exhausted")
	}
	if left == 0 && !o.draining.Load() {
		o.settle(planID)
	}
}

// enter returns this executor's state of a plan it runs a task of, counting the run.
func (o *Orchestrator) enter(planID string) *planHere {
	o.mu.Lock()
	ph := o.here[planID]
	if ph == nil {
		ph = &planHere{renderer: stage.NewRenderer()}
		o.here[planID] = ph
	}
	ph.runs++
	o.mu.Unlock()
	ph.once.Do(func() {
		p, err := o.plans.Plan(context.WithoutCancel(o.ctx), planID)
		if err != nil || p.Canary().Tenants == 0 {
			return
		}
		ph.canary = make(map[string]bool, p.Canary().Tenants)
		for _, tid := range p.CanaryTaskIDs() {
			ph.canary[tid] = true
		}
	})
	return ph
}

// leave counts a run of the plan's out, dropping the plan's state after its last.
func (o *Orchestrator) leave(planID string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if ph := o.here[planID]; ph != nil {
		if ph.runs--; ph.runs <= 0 {
			delete(o.here, planID)
		}
	}
}

// push queues task ids of p. A push the Queue refused (Redis away) is kept and pushed again
// by the dispatch loop, so a PENDING task is never left out of its plan's queue.
func (o *Orchestrator) push(ctx context.Context, p *plan.Plan, ids []string) {
	if len(ids) == 0 {
		return
	}
	if o.draining.Load() && !o.queue.Shared() { // raced a shutdown: these will never start here
		o.interruptQueued(ids)
		return
	}
	lim := limitsOf(p)
	// The queue follows the plan: paused with it (a retry into a PAUSED plan starts nothing),
	// let go when it runs (a plan paused for an executor's loss, then reopened by a retry).
	err := o.queue.SetPaused(ctx, p.ID(), p.Status() == plan.Paused)
	if err == nil {
		err = o.queue.Push(ctx, p.ID(), lim, ids)
	}
	if err != nil {
		o.cfg.Logger.Warn("queue tasks: kept to queue again", "plan_id", p.ID(), "tasks", len(ids), "err", err)
		o.mu.Lock()
		o.unpushed = append(o.unpushed, pendingPush{planID: p.ID(), lim: lim, ids: ids})
		o.mu.Unlock()
	}
	select {
	case o.poke <- struct{}{}:
	default:
	}
}

// pendingPush is a push the Queue refused, to be made again.
type pendingPush struct {
	planID string
	lim    Limits
	ids    []string
}

// pushPending makes the pushes the Queue refused earlier.
func (o *Orchestrator) pushPending() {
	o.mu.Lock()
	list := o.unpushed
	o.unpushed = nil
	o.mu.Unlock()
	for i, pp := range list {
		if err := o.queue.Push(o.ctx, pp.planID, pp.lim, pp.ids); err != nil {
			o.mu.Lock()
			o.unpushed = append(o.unpushed, list[i:]...)
			o.mu.Unlock()
			return
		}
	}
}
