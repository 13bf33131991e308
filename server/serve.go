package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/executor-dev/executor/api"
	"github.com/executor-dev/executor/auth"
	"github.com/executor-dev/executor/console"
	"github.com/executor-dev/executor/infra/outage"
)

// joinTimeout bounds Server.Start's registration among the store's executors.
const joinTimeout = 5 * time.Second

// Server is a wired executor serving its HTTP API.
type Server struct {
	*Executor
	http *http.Server
	ln   net.Listener
	done chan error
	// base is every request's parent context; Stop cancels it so open long polls end at once
	// instead of holding the stop until their deadline.
	base       context.Context
	cancelBase context.CancelFunc
}

// New wires an executor (see NewExecutor) and its HTTP API.
func New(cfg Config) (*Server, error) {
	exe, err := NewExecutor(cfg)
	if err != nil {
		return nil, err
	}
	s := &Server{Executor: exe, done: make(chan error, 1)}
	s.base, s.cancelBase = context.WithCancel(context.Background())
	var h http.Handler = api.NewRouter(exe.svc, api.Options{Name: exe.cfg.Name, Logger: exe.cfg.Logger, MaxBodyBytes: exe.cfg.MaxBodyBytes, MaxEventStreams: exe.cfg.MaxEventStreams, MaxEventStreamsPerClient: exe.cfg.MaxEventStreamsPerClient, Readiness: exe.readiness, Probe: exe.probe, Unavailable: outage.Is, EventHeartbeat: exe.cfg.EventHeartbeat, Console: console.Handler(), Metrics: exe.metrics.Handler(), ObserveRequest: exe.metrics.ObserveRequest, Auth: auth.NewKeys(exe.cfg.Tokens)})
	if exe.cfg.Wrap != nil {
		h = exe.cfg.Wrap(h)
	}
	s.http = &http.Server{
		Handler:           h,
		BaseContext:       func(net.Listener) context.Context { return s.base },
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// No WriteTimeout: GET /v1/plans/{id}?wait= long-polls for up to app.MaxWait.
	}
	return s, nil
}

// Start listens on the configured address, then starts the executor's services in order (see
// Executor.services): it registers the executor among its store's executors first, and serves
// the API last, in the background. It fails, wrapping members.ErrNameInUse, when a live
// executor on the same Redis has the same name; a failed Start has stopped what it started.
// ctx bounds the start, not what it starts: that runs until Stop. Once started, Start does
// nothing; after Stop, or a failed Start, it fails.
func (s *Server) Start(ctx context.Context) error {
	if s.ln != nil {
		return nil
	}
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("server: listen %s: %w", s.cfg.Addr, err)
	}
	s.ln = ln
	s.self.set(ln.Addr())
	join := serviceFuncs{start: s.joinAt(ln.Addr().String()), stop: s.leave}
	serve := serviceFuncs{start: s.serve, stop: s.shutdownHTTP}
	if err := s.life.start(ctx, s.services(join, serve)...); err != nil {
		_ = ln.Close()
		s.ln = nil
		return err
	}
	s.logServing()
	return nil
}

// joinAt returns the start of the registration among the store's executors (see join) of
// the executor serving at addr.
func (s *Server) joinAt(addr string) func(context.Context) error {
	return func(ctx context.Context) error {
		jctx, cancel := context.WithTimeout(ctx, joinTimeout)
		defer cancel()
		if err := s.join(jctx, addr); err != nil {
			return fmt.Errorf("server: %w", err)
		}
		return nil
	}
}

// serve serves the API on the listener in a goroutine of its own, until shutdownHTTP.
func (s *Server) serve(context.Context) error {
	go func() {
		err := s.http.Serve(s.ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
	return nil
}

// shutdownHTTP ends the open long polls and stops serving: it waits for the requests under
// way, or until ctx ends.
func (s *Server) shutdownHTTP(ctx context.Context) error {
	s.cancelBase()
	return s.http.Shutdown(ctx)
}

// logServing logs that the executor serves, and on what.
func (s *Server) logServing() {
	attrs := []any{"addr", s.ln.Addr().String(), "lease_ttl", s.cfg.LeaseTTL.String(), "topology", string(s.cfg.Topology)}
	switch {
	case s.redis == nil:
		attrs = append(attrs, "store", "memory")
	case s.reach.reached.Load():
		attrs = append(attrs, "store", "redis", "redis", "ok")
	default:
		attrs = append(attrs, "store", "redis", "redis", "unreachable", "err", s.unreachedReason())
	}
	s.cfg.Logger.Info("executor serving", attrs...)
	if s.notReady() {
		s.cfg.Logger.Warn("redis not reached since start: not ready, new plans, commands on other executors' work and queries refused until it is",
			"err", s.unreachedReason())
	}
}

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL returns the server's base URL.
func (s *Server) URL() string { return "http://" + s.Addr() }

// Done is closed with the serve loop's error when it stops on its own.
func (s *Server) Done() <-chan error { return s.done }

// Stop drains the executor while still serving the API (see Executor.Drain: new plans get
// 503, queries keep working), then stops its services in reverse order of their start (see
// Executor.Stop): the API first, which stops accepting requests; or gives up when ctx ends.
func (s *Server) Stop(ctx context.Context) error {
	derr := s.Drain(ctx)
	return errors.Join(derr, s.Executor.Stop(ctx))
}
