package orchestrator

import (
	"context"
	"errors"
	"fmt"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// The Fallback queue (Config.Fallback, in process) keeps a shared Queue's work going while the
// Queue does not answer (Redis away): tasks this executor queues meanwhile go to the Fallback
// and this executor starts them, within their plans' limits counted here alone; the Fallback's
// queued tasks move to the Queue as soon as it answers again. Tasks queued in the shared Queue
// before it went away wait for it. Only a push that never reached the Queue goes to the
// Fallback: one the Queue failed may have queued its tasks there (pushlater.go). Without a
// Fallback, a push that did not reach the Queue is kept and made again.

// pushFallback queues ids of p, which never reached the shared Queue (why: err), in the
// Fallback, or keeps the push to make again when there is none.
func (f *feeder) pushFallback(ctx context.Context, p *plan.Plan, ids []string, err error) {
	if f.cfg.Fallback == nil {
		f.pushLater(p.ID(), ids, err)
		return
	}
	err = f.cfg.Fallback.SetPaused(ctx, p.ID(), p.Status() == plan.Paused)
	if err == nil {
		err = f.cfg.Fallback.Push(ctx, p.ID(), limitsOf(p), ids)
	}
	if err != nil {
		f.cfg.Logger.Error("queue tasks in the fallback queue", "plan_id", p.ID(), "err", err)
	}
}

// later records a change the shared Queue refused (a pause, a resume) to make again, in
// order, once it answers.
func (f *feeder) later(what string, planID string, err error, fn func(ctx context.Context) error) {
	f.cfg.Logger.Warn("queue change kept to make again: the queue does not answer", "change", what, "plan_id", planID, "err", err)
	f.mu.Lock()
	f.redo = append(f.redo, fn)
	f.mu.Unlock()
}

// catchUp makes the changes the shared Queue refused, then moves the Fallback's queued tasks
// to it. It stops at the first refusal (the rest is tried again on the next round).
func (f *feeder) catchUp(ctx context.Context) {
	f.mu.Lock()
	list := f.redo
	f.redo = nil
	f.mu.Unlock()
	for i, fn := range list {
		if err := fn(ctx); err != nil {
			f.mu.Lock()
			f.redo = append(list[i:], f.redo...)
			f.mu.Unlock()
			return
		}
	}
	if f.cfg.Fallback == nil {
		return
	}
	plans, err := f.cfg.Fallback.Plans(ctx)
	if err != nil {
		return
	}
	for _, planID := range plans {
		if err := f.moveBack(ctx, planID); err != nil {
			f.cfg.Logger.Debug("move fallback queue back", "plan_id", planID, "err", err)
			return
		}
	}
}

// moveBack moves a plan's queued tasks from the Fallback to the shared Queue (its claimed
// ones stay: their runs end there).
func (f *feeder) moveBack(ctx context.Context, planID string) error {
	p, err := f.plans.Plan(ctx, planID)
	if err != nil {
		return err
	}
	ids, err := f.cfg.Fallback.Drain(ctx, planID)
	if err != nil || len(ids) == 0 {
		return err
	}
	if err := f.queue.SetPaused(ctx, planID, p.Status() == plan.Paused); err != nil {
		_ = f.cfg.Fallback.Push(ctx, planID, limitsOf(p), ids) // not pushed: kept for the next round
		return err
	}
	if err := f.queue.Push(ctx, planID, limitsOf(p), ids); err != nil {
		f.pushLater(planID, ids, err) // maybe queued in the Queue already: never back in the Fallback
		return err
	}
	f.cfg.Logger.Info("tasks queued while the queue was away moved back to it", "plan_id", planID, "tasks", len(ids))
	return nil
}

// queues returns the queues a change to a plan's queued tasks applies to.
func (f *feeder) queues() []Queue {
	if f.cfg.Fallback == nil {
		return []Queue{f.queue}
	}
	return []Queue{f.queue, f.cfg.Fallback}
}

// setPaused pauses (or lets go) the plan's starts in every queue; a refusal of the shared
// Queue is made again once it answers.
func (f *feeder) setPaused(ctx context.Context, planID string, paused bool) {
	for _, q := range f.queues() {
		err := errQueueAway
		if q != f.queue || !f.degraded() {
			err = q.SetPaused(ctx, planID, paused)
		}
		if err != nil && q == f.queue {
			f.later("pause", planID, err, func(ctx context.Context) error { return q.SetPaused(ctx, planID, paused) })
		}
	}
}

// unqueue takes ids out of the plan's queues (nil: all of them) and returns those that were
// queued. A queue that does not answer keeps them: a task that is not PENDING when claimed is
// not run.
func (f *feeder) unqueue(ctx context.Context, planID string, ids []string) []string {
	var out []string
	for _, q := range f.queues() {
		if q == f.queue && f.degraded() {
			continue // Redis away: its entries stay, and are not run (they are not PENDING)
		}
		var got []string
		var err error
		if ids == nil {
			got, err = q.Drain(ctx, planID)
		} else {
			got, err = q.Remove(ctx, planID, ids)
		}
		if err != nil {
			f.cfg.Logger.Warn("take tasks out of a plan's queue", "plan_id", planID, "err", err)
		}
		out = append(out, got...)
	}
	return out
}

// Restored is told that the store's Redis answers again and the write-back is done; lost: it
// had lost its data (it was restarted empty), the shared Queue's included. The dispatch loop
// then makes the changes the Queue refused and moves the Fallback's queued tasks back; after a
// loss, every PENDING task of every RUNNING or PAUSED plan is queued again, in the shared Queue
// only (pushShared), and again at the next Restored until that succeeded (a task queued twice
// is not added twice; one that is not PENDING when claimed is not run).
// The plans settled while Redis was away (or whose settle failed) are settled again, from
// Redis (resettle.go).
func (o *Orchestrator) Restored(lost bool) {
	if lost {
		o.settler.lostAt.Store(o.settler.now().UnixNano())
	}
	o.feeder.requeueLost(lost)
	o.settler.resettleAll()
	o.dispatcher.wake()
}

// requeueLost queues again, after Redis lost its data (lost, or a loss whose requeue did
// not finish), every PENDING task of the plans that have not ended (requeueAll).
func (f *feeder) requeueLost(lost bool) {
	if lost {
		f.requeueDue.Store(true)
	}
	if !f.requeueDue.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(f.ctx), persistTimeout)
	defer cancel()
	if err := f.requeueAll(ctx); err != nil {
		f.cfg.Logger.Error("queue again the tasks Redis lost: tried again when Redis answers again", "err", err)
		return
	}
	f.requeueDue.Store(false)
}

// requeueMax bounds the plans requeueAll looks at per status.
const requeueMax = 10000

// requeueAll queues again the PENDING tasks of every RUNNING or PAUSED plan.
func (f *feeder) requeueAll(ctx context.Context) error {
	for _, st := range []plan.Status{plan.Running, plan.Paused} {
		plans, err := f.plans.List(ctx, plan.Filter{Status: st, Limit: requeueMax})
		if err != nil {
			return fmt.Errorf("orchestrator: list %s plans: %w", st, err)
		}
		for _, p := range plans {
			if err := f.requeuePlan(ctx, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// requeuePlan queues again the PENDING tasks of p (of its rings that may start, for a rolling plan), in
// the shared Queue only (pushShared).
func (f *feeder) requeuePlan(ctx context.Context, p *plan.Plan) error {
	ids := p.StartableTaskIDs()
	statuses, err := f.tasks.Statuses(ctx, ids)
	pending := ids // one is lost: push them all, a claim skips what is not PENDING
	switch {
	case errors.Is(err, task.ErrNotFound):
	case err != nil:
		return err
	default:
		pending = nil
		for i, s := range statuses {
			if s == task.Pending {
				pending = append(pending, ids[i])
			}
		}
	}
	f.pushShared(ctx, p, pending)
	return nil
}

// pushShared queues ids of p in the shared Queue, or, when it fails, makes the push again
// once it answers (pushLater): never in the Fallback. What requeueAll queues was not accepted
// by this executor alone: every executor that lived through the loss queues the same tasks,
// and a task in the Fallbacks of two executors would run on both at once.
func (f *feeder) pushShared(ctx context.Context, p *plan.Plan, ids []string) {
	if len(ids) == 0 {
		return
	}
	err := f.queue.SetPaused(ctx, p.ID(), p.Status() == plan.Paused)
	if err == nil {
		err = f.queue.Push(ctx, p.ID(), limitsOf(p), ids)
	}
	if err != nil {
		f.pushLater(p.ID(), ids, err)
	}
}
