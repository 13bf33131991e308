package orchestrator

import (
	"context"

	"github.com/executor-dev/executor/domain/plan"
)

// push queues task ids of p. A push that never reached the shared Queue (Redis away
// already, or the plan's pause state refused) goes to the Fallback; a push the Queue failed
// may have been queued all the same (its reply lost, or a later step of it failed), so it is
// never queued here as well: it is made again once the Queue answers (pushLater). Either way
// a PENDING task is never left out of its plan's queue, and is never in two queues at once.
func (f *feeder) push(ctx context.Context, p *plan.Plan, ids []string) {
	if len(ids) == 0 {
		return
	}
	if f.draining.Load() && !f.queue.Shared() { // raced a shutdown: these will never start here
		f.interruptQueued(ids)
		return
	}
	// The queue follows the plan: paused with it (a retry into a PAUSED plan starts nothing),
	// let go when it runs (a plan paused for an executor's loss, then reopened by a retry).
	err := errQueueAway
	if !f.degraded() || f.cfg.Fallback == nil {
		err = f.queue.SetPaused(ctx, p.ID(), p.Status() == plan.Paused)
	}
	if err == nil {
		if err := f.queue.Push(ctx, p.ID(), limitsOf(p), ids); err != nil {
			f.pushLater(p.ID(), ids, err)
		}
	} else {
		f.cfg.Logger.Warn("queue tasks: the queue does not answer; queued here until it does", "plan_id", p.ID(), "tasks", len(ids), "err", err)
		f.pushFallback(ctx, p, ids, err)
	}
	select {
	case f.dispatcher.poke <- struct{}{}:
	default:
	}
}

// closeQueue forgets an ended plan's queues (each keeps a plan that has work again).
func (f *feeder) closeQueue(ctx context.Context, planID string) {
	for _, q := range f.queues() {
		if err := q.Close(ctx, planID); err != nil {
			f.cfg.Logger.Debug("close the queue of an ended plan", "plan_id", planID, "err", err)
		}
	}
}
