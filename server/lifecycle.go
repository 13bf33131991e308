package server

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/executor-dev/executor/infra/dispatch"
	"github.com/executor-dev/executor/infra/eventstream"
	"github.com/executor-dev/executor/infra/members"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/schedule"
	"github.com/executor-dev/executor/infra/signals"
	"github.com/executor-dev/executor/orchestrator"
)

// service is one background part of an executor: the Redis store's probe (the in-memory
// store's sweep of ended plans), the event stream and its reader, the signals, the dispatch
// queue, the orchestrator, the scheduler, the registry of executors, the HTTP API. Every one
// has this one shape (River's startstop.Service is the model):
//
//   - Start starts its goroutines and returns; ctx bounds the start (its Redis round trips),
//     not what it then runs, which runs until Stop. It fails when the service cannot run.
//     What a service needs besides a context is set before (schedule's SetDue, signals'
//     SetReceive: they call the orchestrator, which is built after them).
//   - Stop ends its goroutines and waits for them, or gives up when ctx ends. A service
//     tolerates a Stop without a Start, and a second Stop.
type service interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

var (
	_ service   = (*redisrepo.Store)(nil)
	_ service   = (*memrepo.DB)(nil)
	_ service   = (*eventstream.Stream)(nil)
	_ service   = (*eventstream.Reader)(nil)
	_ service   = (*signals.Redis)(nil)
	_ service   = (*dispatch.Memory)(nil)
	_ service   = (*dispatch.Redis)(nil)
	_ service   = (*orchestrator.Orchestrator)(nil)
	_ scheduler = (*schedule.Memory)(nil)
	_ scheduler = (*schedule.Redis)(nil)
	_ registry  = (*members.Memory)(nil)
	_ registry  = (*members.Redis)(nil)
	_ service   = serviceFuncs{}
)

// failedStartTimeout bounds the stop of what a failed start had started.
const failedStartTimeout = 10 * time.Second

// errStopped: the services were stopped, or failed to start; they do not start again.
var errStopped = errors.New("server: start: the executor was stopped, or failed to start")

// lifecycle starts services in order and stops them in reverse order.
type lifecycle struct {
	mu       sync.Mutex
	started  bool      // start succeeded
	stopped  bool      // stop ran, or start failed
	services []service // in start order: those start started, or, before it, those stop stops
}

// start starts services in order, once: a second start does nothing. When one fails, those
// it started are stopped in reverse order, and its error is returned: nothing runs then, and
// nothing starts again (errStopped), as after stop.
func (l *lifecycle) start(ctx context.Context, services ...service) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.stopped:
		return errStopped
	case l.started:
		return nil
	}
	for i, s := range services {
		if err := s.Start(ctx); err != nil {
			l.stopped, l.services = true, nil
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), failedStartTimeout)
			defer cancel()
			return errors.Join(err, stopAll(sctx, services[:i]))
		}
	}
	l.started, l.services = true, services
	return nil
}

// stop stops the services in reverse order of their start, once, and joins their errors.
func (l *lifecycle) stop(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	services := l.services
	l.stopped, l.services = true, nil
	return stopAll(ctx, services)
}

// stopAll stops services in reverse order and joins their errors.
func stopAll(ctx context.Context, services []service) error {
	var errs []error
	for i := len(services) - 1; i >= 0; i-- {
		errs = append(errs, services[i].Stop(ctx))
	}
	return errors.Join(errs...)
}

// serviceFuncs is a service made of two funcs; a nil one does nothing.
type serviceFuncs struct {
	start func(ctx context.Context) error
	stop  func(ctx context.Context) error
}

// Start runs start.
func (f serviceFuncs) Start(ctx context.Context) error {
	if f.start == nil {
		return nil
	}
	return f.start(ctx)
}

// Stop runs stop.
func (f serviceFuncs) Stop(ctx context.Context) error {
	if f.stop == nil {
		return nil
	}
	return f.stop(ctx)
}
