package server

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/executor-dev/executor/infra/outage"
)

// Backoff of the checks of what Redis grants the executor while it refuses something.
const (
	reachMin = 100 * time.Millisecond
	reachMax = 2 * time.Second
)

// reach records whether the executor has reached its Redis since it started: the store's
// monitor found it healthy once (the store's first probe at Start succeeded, or a later
// write-back did) and Redis granted what the executor needs (access.go). Until then an
// executor, whatever its topology, is not ready and refuses new work (notReady): on memory it
// could deploy a tenant another executor is deploying. Whenever Redis refuses what the
// executor needs (a password, an ACL permission, a command, the TLS certificate: access.go),
// it is not ready either.
type reach struct {
	reached atomic.Bool
	access  access
	stop    chan struct{} // closed by stopWatch; nil when no watch runs
	done    chan struct{} // closed when the watch has returned
	once    sync.Once
}

// notReady reports whether the executor refuses new work because it has not reached Redis
// since it started (never on the in-memory store), or because Redis refuses what it needs.
func (e *Executor) notReady() bool {
	if e.store == nil {
		return false
	}
	return !e.reach.reached.Load() || e.reach.access.refusal() != nil
}

// unreachedReason is GET /readyz's reason while the executor is not ready: what Redis refuses
// it, or, while Redis was not reached since the start, the Redis error the store's probe met,
// if any.
func (e *Executor) unreachedReason() string {
	if refused := e.reach.access.refusal(); refused != nil {
		return refused.Error()
	}
	const reason = "redis not reached yet since start"
	if cause := e.mon.Reason(); cause != "" {
		return reason + ": " + cause
	}
	return reason
}

// watchReach checks what Redis grants the executor (unless the store's first probe, just
// before, found Redis away), marks Redis reached if the probe succeeded and Redis granted it,
// and starts the watch (reachLoop) that keeps both right until stopWatch. It never fails.
func (e *Executor) watchReach(ctx context.Context) error {
	e.reach.access.init(e.redis, e.cfg)
	checked := e.shouldCheck()
	if checked {
		_ = e.reach.access.check(ctx)
	}
	e.markReached(time.Time{})
	e.reach.stop, e.reach.done = make(chan struct{}), make(chan struct{})
	go e.reachLoop(time.Now(), checked)
	return nil
}

// shouldCheck reports whether asking Redis what it grants may get an answer: Redis is healthy,
// or its outage is a refusal of the executor (outage.Denied: NOAUTH, NOPERM, …). While Redis is
// away, the store's probe watches it.
func (e *Executor) shouldCheck() bool {
	down, _ := e.mon.Degraded()
	return !down || outage.Denied(e.mon.Cause())
}

// markReached marks Redis reached, once, when the monitor is healthy and Redis granted what
// the executor needs; it logs it when the executor waited for it since start (not zero).
func (e *Executor) markReached(start time.Time) {
	if down, _ := e.mon.Degraded(); down || !e.reach.access.granted() || e.reach.reached.Load() {
		return
	}
	e.reach.reached.Store(true)
	if !start.IsZero() {
		e.cfg.Logger.Info("redis reached", "unreached_for", time.Since(start).Round(time.Millisecond).String())
	}
}

// reachLoop keeps reach right: it marks Redis reached once the monitor is healthy and Redis
// grants what the executor needs (and logs it); it checks what Redis grants again at every
// switch of the monitor, when GET /readyz found a refusal (kick), and, while Redis refuses
// something (or the check got no answer), with a backoff of 0.1 s doubling to 2 s. checked: a
// check was just made (watchReach's).
func (e *Executor) reachLoop(start time.Time, checked bool) {
	defer close(e.reach.done)
	backoff := reachMin
	for {
		changed := e.mon.Changed()
		if !checked && e.shouldCheck() {
			_ = e.reach.access.check(context.Background())
		}
		checked = false
		e.markReached(start)
		var retry <-chan time.Time
		if e.shouldCheck() && !e.reach.access.granted() {
			retry = time.After(backoff)
			backoff = min(2*backoff, reachMax)
		} else {
			backoff = reachMin
		}
		select {
		case <-changed:
		case <-e.reach.access.kicked():
		case <-retry:
		case <-e.reach.stop:
			return
		}
	}
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
