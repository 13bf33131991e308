package orchestrator

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
)

// errQueueAway: the store runs degraded (Redis away), so the shared Queue is not tried.
var errQueueAway = errors.New("orchestrator: the queue's Redis is away")

// Dispatch timing.
const (
	dispatchFallback = time.Second            // a claim round at least this often, woken or not
	plansRefresh     = 200 * time.Millisecond // the plans with work are listed again at most this often
	queueRetry       = 250 * time.Millisecond // after a failed queue call
	claimBatch       = 32                     // the most tasks one claim takes (one per free worker)
	chainFor         = time.Second            // how long a worker goes on with its plan's next tasks
)

// planHere is what this executor keeps of a plan while it runs tasks of it: dropped when its
// last run here ends, so memory follows the runs, not the plans ever seen.
type planHere struct {
	renderer *stage.Renderer
	once     sync.Once
	rolling  bool // the plan rolls out in rings
	// onFailure is what a task of the plan that fails sets off (plan.OnFailure).
	onFailure plan.OnFailure
	runs      int // guarded by core.mu
}

// dispatch claims tasks from the Queue while a worker slot is free (as many in one claim as
// workers are free, up to claimBatch) and runs each, until Stop: one loop per executor,
// over every plan with work (round robin, so one plan does not starve the others). It waits for a wake (a push, an end, an unpause, on any executor), the
// start rate's wait, or the fallback period.
func (d *dispatcher) dispatch() {
	defer close(d.dispatched)
	var plans []string
	var listed time.Time
	stale := true // something may have changed the plans with work: list them again
	next := 0
	for {
		select {
		case d.slots <- struct{}{}:
		case <-d.stopClaims:
			return
		}
		if d.degraded() { // Redis away: only what was queued here meanwhile starts
			plans, listed = nil, time.Time{}
		} else if time.Since(listed) >= dispatchFallback || (stale && time.Since(listed) >= plansRefresh) {
			stale = false
			if ps, err := d.queue.Plans(d.ctx); err == nil {
				plans, listed = ps, time.Now()
				d.keepKinds(plans)
				d.contended.Store(len(plans) > 1)
				d.feeder.catchUp(d.ctx)
				d.settler.resettleAll()
			} else {
				d.cfg.Logger.Debug("list plans with work", "err", err)
				plans = nil
			}
		}
		// More free workers: claimed in the same round trip.
		held := 1
	more:
		for held < claimBatch {
			select {
			case d.slots <- struct{}{}:
				held++
			default:
				break more
			}
		}
		q, planID, ids, wait, err := d.claimNext(plans, &next, held)
		for _, id := range ids {
			d.wg.Add(1)
			go d.runClaimed(q, planID, id)
		}
		for range held - len(ids) {
			<-d.slots
		}
		if len(ids) > 0 {
			continue
		}
		pause := dispatchFallback
		switch {
		case err != nil:
			pause = queueRetry
		case wait > 0 && wait < pause:
			pause = wait
		}
		t := time.NewTimer(pause)
		var fallbackWoken <-chan struct{} // nil without a Fallback: never ready
		if d.cfg.Fallback != nil {
			fallbackWoken = d.cfg.Fallback.Woken()
		}
		select {
		case <-d.queue.Woken():
			stale = true
		case <-fallbackWoken:
		case <-d.poke:
			listed = time.Time{}
		case <-t.C:
			stale = true
		case <-d.stopClaims:
			t.Stop()
			return
		}
		t.Stop()
	}
}

// claimNext claims up to n tasks from the Fallback's plans, else from the first of plans
// (from *next on) that lets some start; it also returns the shortest start-rate wait it met.
func (d *dispatcher) claimNext(plans []string, next *int, n int) (q Queue, planID string, ids []string, wait time.Duration, err error) {
	if f := d.cfg.Fallback; f != nil {
		local, _ := f.Plans(d.ctx)
		for _, p := range local {
			ids, w, err := f.ClaimN(d.ctx, p, d.cfg.Name, n)
			if err == nil && len(ids) > 0 {
				return f, p, ids, 0, nil
			}
			if w > 0 && (wait == 0 || w < wait) {
				wait = w
			}
		}
	}
	if paused := d.claimsPaused(); paused > 0 && len(plans) > 0 {
		return nil, "", nil, paused, nil // look again once the executors wrote back
	}
	for k := range plans {
		i := (*next + k) % len(plans)
		if !d.runnable(plans[i]) {
			continue
		}
		ids, w, err := d.queue.ClaimN(d.ctx, plans[i], d.cfg.Name, n)
		if err != nil {
			d.cfg.Logger.Debug("claim tasks", "plan_id", plans[i], "err", err)
			return nil, "", nil, 0, err
		}
		if len(ids) > 0 {
			*next = (i + 1) % len(plans)
			return d.queue, plans[i], ids, 0, nil
		}
		if w > 0 && (wait == 0 || w < wait) {
			wait = w
		}
	}
	return nil, "", nil, wait, nil
}

// runClaimed runs a claimed task, then tells the Queue how its run ended: the slot is freed
// (or the task handed back), the failure budget counted, and the plan settled when nothing of
// it is left queued or claimed. The same step may claim the plan's next task for this worker
// (Queue.DoneClaim), which it then runs, for up to chainFor: a steady rollout then needs no
// claim of its own per task. It does not chain while the dispatch loop knows of other plans
// with work (they get their turn from the loop's round robin) nor once the chain is
// chainFor old (the loop then lists the plans again).
func (d *dispatcher) runClaimed(q Queue, planID, id string) {
	defer d.wg.Done()
	ph := d.enter(planID)
	defer d.leave(planID)
	since := time.Now()
	for id != "" {
		end := d.runTask(ph, id)
		if end == endFailed && ph.onFailure == plan.OnFailurePause {
			d.pauseOnFailure(planID, id)
		}
		if ph.rolling && end == endFailed {
			// A failure is judged against its ring's budget at once, before the slot is freed
			// (nothing more of the ring may start past it). A ring's completion is judged when
			// the plan's queue has nothing left (ended: the settle judges the ring first).
			d.rollout.judgeFailures(planID)
		}
		chain := !d.draining.Load() && !d.contended.Load() && time.Since(since) < chainFor
		id = d.finish(q, planID, id, end, chain)
	}
	<-d.slots
}

// finish tells the queue q, from which the task was claimed, how its run ended; with chain,
// it claims the plan's next task for this worker in the same step and returns it ("": none).
func (d *dispatcher) finish(q Queue, planID, id string, end runEnd, chain bool) (next string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(d.ctx), persistTimeout)
	defer cancel()
	if end == endHandedBack {
		if err := q.Return(ctx, planID, id); err != nil {
			// Kept and made again when the queue answers: the task waits in its claim meanwhile.
			d.feeder.later("hand a task back", planID, err, func(ctx context.Context) error { return q.Return(ctx, planID, id) })
		}
		return ""
	}
	if d.degraded() {
		// The run's end is journaled, not in Redis yet: a settle from Redis (this one's, or the
		// one of the executor ending the plan's last task) would not see it. Once written
		// back, the plan is settled again.
		d.settler.markResettle(planID)
	}
	claimer := ""
	if chain && d.claimsPaused() == 0 {
		claimer = d.cfg.Name
	}
	drained, left, next, err := q.DoneClaim(ctx, planID, id, end == endFailed, claimer)
	if err != nil {
		// The claim stays under this executor's name until the queue answers again: the done
		// is made again then (a repeated done counts nothing twice), so the plan's slot is
		// freed and its budget counted. The plan is settled from its tasks meanwhile (on
		// memory while Redis is away).
		d.feeder.later("free a task's slot", planID, err, func(ctx context.Context) error {
			drained, left, _, err := q.DoneClaim(ctx, planID, id, end == endFailed, "")
			if err == nil {
				d.ended(planID, drained, left)
			}
			return err
		})
		left, next = -1, ""
	}
	d.ended(planID, drained, left)
	return next
}

// ended acts on what the queue answered to a task's end: the tasks the failure budget took
// out of the queue are cancelled, and the plan settles when nothing of it is left (left <= 0;
// negative: the queue did not answer).
func (d *dispatcher) ended(planID string, drained []string, left int) {
	if len(drained) > 0 {
		d.cancelQueued(drained, "failure budget exhausted")
		d.noteOnce(d.ctx, planID, "budget", func(p *plan.Plan, now time.Time) bool {
			return p.NoteOnce(plan.EventBudgetCrossed, "failure budget of "+strconv.Itoa(p.FailureBudget())+" failed tasks crossed: the tasks not started are cancelled", now)
		})
	}
	if left <= 0 && !d.draining.Load() {
		d.settler.settle(planID)
	}
}

// enter returns this executor's state of a plan it runs a task of, counting the run.
func (d *dispatcher) enter(planID string) *planHere {
	d.mu.Lock()
	ph := d.here[planID]
	if ph == nil {
		ph = &planHere{renderer: stage.NewRenderer()}
		d.here[planID] = ph
	}
	ph.runs++
	d.mu.Unlock()
	ph.once.Do(func() {
		p, err := d.plans.Plan(context.WithoutCancel(d.ctx), planID)
		ph.rolling = err == nil && p.Rollout().Enabled()
		if err == nil {
			ph.onFailure = p.OnFailure()
		}
	})
	return ph
}

// leave counts a run of the plan's out, dropping the plan's state after its last.
func (d *dispatcher) leave(planID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if ph := d.here[planID]; ph != nil {
		if ph.runs--; ph.runs <= 0 {
			delete(d.here, planID)
		}
	}
}
