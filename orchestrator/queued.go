package orchestrator

import (
	"context"
	"time"
)

// queuedTimeout bounds Queued's count.
const queuedTimeout = 2 * time.Second

// Queued returns how many tasks wait to start across every plan with work in the Queue (on
// Redis: the cluster's, whichever executor queued them): launched or requeued, not yet
// claimed (held back by a plan's maxConcurrency, startRate, a pause or the workers). Tasks
// of a SCHEDULED plan are not queued before its startAt. The submission use case refuses a
// plan that would queue more than its limit (app.ErrBusy). When the Queue does not answer
// it returns the last count.
func (d *dispatcher) Queued() int {
	ctx, cancel := context.WithTimeout(context.Background(), queuedTimeout)
	defer cancel()
	n := 0
	for _, q := range d.feeder.queues() {
		plans, err := q.Plans(ctx)
		if err != nil {
			return int(d.queued.Load())
		}
		for _, id := range plans {
			queued, _, err := q.Len(ctx, id)
			if err != nil {
				return int(d.queued.Load())
			}
			n += queued
		}
	}
	d.queued.Store(int64(n))
	return n
}

// Workers returns the worker cap: how many tasks run at once across every plan.
func (o *Orchestrator) Workers() int { return o.cfg.Workers }
