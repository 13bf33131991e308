package server

import (
	"context"
	"errors"
)

// services are the executor's services in start order: the Redis client (closed last), or the
// in-memory store's sweep of ended plans (stopped last), join (Server.Start's registration
// among the store's executors; nil for an Executor alone), the Redis store's probe and the
// watch of its first reach, the event stream and its reader, the signals, the dispatch queue,
// the orchestrator, the scheduler, and serve (the HTTP API; nil for an Executor alone). On the
// in-memory store the Redis ones are left out.
//
// Each stops after what starts after it: the HTTP API first, the orchestrator while the
// signals still reach its runs, the deregistration after the runs ended (it counts them)
// and before the client closes.
func (e *Executor) services(join, serve service) []service {
	var list []service
	if e.redis != nil {
		list = append(list, serviceFuncs{stop: e.closeRedis})
	}
	if e.sweep != nil {
		list = append(list, e.sweep)
	}
	if join != nil {
		list = append(list, join)
	}
	if e.redis != nil {
		list = append(list, e.store, serviceFuncs{start: e.watchReach, stop: e.reach.stopWatch},
			e.stream, e.reader, e.signals)
	}
	list = append(list, e.dispatch, e.orch, e.sched, e.notifier)
	if serve != nil {
		list = append(list, serve)
	}
	return list
}

// closeRedis closes the runs' auto-pipeline and the Redis client. A journal still waiting
// then (Redis away at shutdown) goes with the process.
func (e *Executor) closeRedis(context.Context) error {
	return errors.Join(e.batched.Close(), e.redis.Close())
}

// Start starts the executor's services in order (see services), and fails, having stopped
// what it started, when one fails. ctx bounds the start, not what it starts: that runs until
// Stop. Once started, Start does nothing; after Stop, or a failed Start, it fails.
func (e *Executor) Start(ctx context.Context) error {
	return e.life.start(ctx, e.services(nil, nil)...)
}

// Drain is the graceful part of a shutdown: the executor takes no new work (new plans,
// retries and resumes answer 503), tasks queued to start become INTERRUPTED, running tasks
// stop at their next stage boundary, and after Config.ShutdownTimeout their stages are
// cancelled. Every task not done ends INTERRUPTED with its checkpoint intact and its lease
// released. Queries, pauses and cancels are still served meanwhile. It returns when every run
// has ended, or when ctx ends.
func (e *Executor) Drain(ctx context.Context) error {
	e.cfg.Logger.Info("executor draining: no new work; running tasks stop at their next stage boundary",
		"shutdown_timeout", e.cfg.ShutdownTimeout.String())
	serr := e.sched.Stop(ctx) // a plan that comes due now is left to another executor, or to the next start
	return errors.Join(serr, e.orch.Stop(ctx))
}

// CutShort cuts a Drain short (serve's second SIGTERM): the stages still running are
// cancelled now, as when Config.ShutdownTimeout runs out; their tasks end INTERRUPTED with
// their checkpoints intact and their leases released. It does not wait: the Drain (or Stop)
// under way returns once every run has ended.
func (e *Executor) CutShort() { e.orch.CutShort() }

// Stop ends every run at once (tasks still running become INTERRUPTED, their checkpoints
// intact, their leases released; Drain first for a graceful end) and stops the executor's
// services in reverse order of their start (see services): it deregisters the executor from
// its store's executors, stops the store's probe and closes the Redis client. Only the first
// Stop has an effect; it returns the services' errors, joined.
func (e *Executor) Stop(ctx context.Context) error {
	e.orch.CutShort()
	return e.life.stop(ctx)
}
