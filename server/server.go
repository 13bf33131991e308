package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/executor-dev/executor/api"
	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/orchestrator"
	"github.com/executor-dev/executor/stagekind"
)

// Config is the executor's configuration.
type Config struct {
	Addr    string       // listen address; "127.0.0.1:0" picks a free port
	Workers int          // tasks running at once across all plans; default orchestrator.DefaultWorkers
	Logger  *slog.Logger // default slog.Default()
}

// Server is a wired executor.
type Server struct {
	cfg   Config
	kinds *stagekind.Registry
	orch  *orchestrator.Orchestrator
	svc   *app.Service
	http  *http.Server
	ln    net.Listener
	done  chan error
	// base is every request's parent context; Shutdown cancels it so open long polls end
	// at once instead of holding shutdown until their deadline.
	base       context.Context
	cancelBase context.CancelFunc
}

// New wires an executor on the embedded in-memory store. Register custom stage kinds on
// Kinds() before Start.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	db := memrepo.New()
	locker := lock.NewMemory()
	kinds := stagekind.Builtin(stagekind.HTTPOptions{})
	orch := orchestrator.New(db.Plans(), db.Tasks(), db.Checkpoints(), locker, kinds,
		orchestrator.Config{Workers: cfg.Workers, Logger: cfg.Logger})
	svc := app.New(app.Deps{
		Plans: db.Plans(), Tasks: db.Tasks(), Checkpoints: db.Checkpoints(),
		Kinds: kinds, Holders: locker, Runner: orch,
	})
	base, cancelBase := context.WithCancel(context.Background())
	return &Server{
		cfg: cfg, kinds: kinds, orch: orch, svc: svc, base: base, cancelBase: cancelBase,
		http: &http.Server{
			BaseContext:       func(net.Listener) context.Context { return base },
			Handler:           api.NewRouter(svc, api.Options{Logger: cfg.Logger}),
			ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout:       30 * time.Second,
			IdleTimeout:       2 * time.Minute,
			// No WriteTimeout: GET /v1/plans/{id}?wait= long-polls for up to app.MaxWait.
		},
	}
}

// Kinds returns the stage kind registry, to register custom kinds.
func (s *Server) Kinds() *stagekind.Registry { return s.kinds }

// Service returns the use cases.
func (s *Server) Service() *app.Service { return s.svc }

// Start listens on the configured address and serves in the background.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("server: listen %s: %w", s.cfg.Addr, err)
	}
	s.ln = ln
	s.orch.Start()
	s.done = make(chan error, 1)
	go func() {
		err := s.http.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
	s.cfg.Logger.Info("executor serving", "addr", ln.Addr().String(), "store", "memory")
	return nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL returns the server's base URL.
func (s *Server) URL() string { return "http://" + s.Addr() }

// Done is closed with the serve loop's error when it stops on its own.
func (s *Server) Done() <-chan error { return s.done }

// Shutdown stops accepting requests, ends every run (tasks still running become INTERRUPTED,
// their checkpoints intact) and waits for both, or for ctx.
func (s *Server) Shutdown(ctx context.Context) error {
	s.cancelBase()
	herr := s.http.Shutdown(ctx)
	oerr := s.orch.Stop(ctx)
	return errors.Join(herr, oerr)
}
