package server

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// reach records whether the executor has reached its Redis since it started: the store's
// monitor found it healthy once (the store's first probe at Start succeeded, or a later
// write-back did). Until then an executor started without Config.StartDegraded is not ready
// and refuses new work (notReady): on memory it could deploy a tenant another executor is
// deploying.
type reach struct {
	reached atomic.Bool
	stop    chan struct{} // closed by stopWatch; nil when no watch runs
	done    chan struct{} // closed when the watch has returned
	once    sync.Once
}

// notReady reports whether the executor refuses new work because it has not reached Redis
// since it started (never on the in-memory store, nor with Config.StartDegraded).
func (e *Executor) notReady() bool {
	return e.store != nil && !e.cfg.StartDegraded && !e.reach.reached.Load()
}

// unreachedReason is GET /readyz's reason while Redis was not reached since the start: with
// the Redis error the store's probe met, if any.
func (e *Executor) unreachedReason() string {
	const reason = "redis not reached yet since start"
	if cause := e.mon.Reason(); cause != "" {
		return reason + ": " + cause
	}
	return reason
}

// watchReach marks Redis reached if the store's first probe (Store.Start, just before)
// succeeded; else it watches the monitor until Redis answers (or stopWatch), then marks it and
// logs it. It never fails.
func (e *Executor) watchReach(context.Context) error {
	if down, _ := e.mon.Degraded(); !down {
		e.reach.reached.Store(true)
		return nil
	}
	e.reach.stop, e.reach.done = make(chan struct{}), make(chan struct{})
	start := time.Now()
	go func() {
		defer close(e.reach.done)
		for {
			changed := e.mon.Changed()
			if down, _ := e.mon.Degraded(); !down {
				e.reach.reached.Store(true)
				e.cfg.Logger.Info("redis reached", "unreached_for", time.Since(start).Round(time.Millisecond).String())
				return
			}
			select {
			case <-changed:
			case <-e.reach.stop:
				return
			}
		}
	}()
	return nil
}

// stopWatch ends watchReach's watch, if one runs, and waits for it, or until ctx ends.
func (r *reach) stopWatch(ctx context.Context) error {
	if r.stop == nil {
		return nil
	}
	r.once.Do(func() { close(r.stop) })
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("server: stop the watch of redis: %w", ctx.Err())
	}
}
