package orchestrator

import (
	"errors"
	"time"

	"github.com/executor-dev/executor/domain/task"
)

// handBackPause is how long a worker waits before handing back a task it could not read: a
// read that keeps failing must not make the dispatch loop claim the same task in a busy loop.
const handBackPause = queueRetry

// claimFailed decides what becomes of a claimed task that claim could not read (Redis away,
// a read that timed out, the run cancelled while waiting for its previous run). Such a task
// is still PENDING as far as anybody knows, and nobody else will start it while it is
// claimed: it is handed back to the queue it was claimed from (the front of its plan's
// queue, or its Fallback), after a short pause, so that it runs later, here or elsewhere. It
// is dropped only when the store answers that it does not exist (not found while Redis
// answers: there is nothing to run). On the in-memory Queue during a shutdown, whose queue
// dies with the process, it is interrupted instead, as a queued task is.
func (o *core) claimFailed(id string, err error) runEnd {
	log := o.cfg.Logger.With("task_id", id, "err", err)
	if errors.Is(err, task.ErrNotFound) && !o.degraded() {
		log.Warn("claimed task not found: nothing to run")
		return endDone
	}
	if o.draining.Load() && !o.queue.Shared() {
		o.interruptQueued([]string{id})
		return endDone
	}
	log.Warn("claimed task not read: handed back to its plan's queue to run later")
	if !o.draining.Load() {
		t := time.NewTimer(handBackPause)
		select {
		case <-t.C:
		case <-o.ctx.Done():
		}
		t.Stop()
	}
	return endHandedBack
}
