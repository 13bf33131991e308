package orchestrator

import "sync/atomic"

// queueCount counts the tasks queued but not yet started, across every plan. Each planRun
// adds what it queues and takes away what leaves its queue (started, drained, abandoned at
// shutdown), under its own lock; a nil *queueCount counts nothing.
type queueCount struct {
	n atomic.Int64
}

func (c *queueCount) add(delta int) {
	if c != nil && delta != 0 {
		c.n.Add(int64(delta))
	}
}

// Queued returns how many tasks wait to start across every plan: launched or requeued, but
// not yet started (held back by a plan's maxConcurrency, a pause or the worker cap). Tasks of
// a SCHEDULED plan are not queued before its startAt. The submission use case refuses a plan
// that would queue more than its limit (app.ErrBusy).
func (o *Orchestrator) Queued() int { return int(o.queued.n.Load()) }

// Workers returns the worker cap: how many tasks run at once across every plan.
func (o *Orchestrator) Workers() int { return o.cfg.Workers }
