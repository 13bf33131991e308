package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/api"
	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/infra/outage"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/orchestrator"
	"github.com/executor-dev/executor/stagekind"
)

// Config is the executor's configuration.
type Config struct {
	Addr     string        // listen address; "127.0.0.1:0" picks a free port
	Workers  int           // tasks running at once across all plans; default orchestrator.DefaultWorkers
	RedisURL string        // empty: the embedded in-memory store
	Prefix   string        // Redis key prefix; default rediskey.DefaultPrefix
	LeaseTTL time.Duration // tenant lease TTL; default orchestrator.DefaultLeaseTTL
	// RejectNewPlansWhileDegraded makes POST /v1/plans answer 503 while Redis is away
	// (--degraded-new-plans=reject), for operators who run several executors.
	RejectNewPlansWhileDegraded bool
	Logger                      *slog.Logger // default slog.Default()
}

// Server is a wired executor.
type Server struct {
	cfg   Config
	kinds *stagekind.Registry
	orch  *orchestrator.Orchestrator
	svc   *app.Service
	redis redis.UniversalClient // nil on the in-memory store
	store *redisrepo.Store      // nil on the in-memory store
	mon   *outage.Monitor       // nil on the in-memory store
	http  *http.Server
	ln    net.Listener
	done  chan error
	// base is every request's parent context; Shutdown cancels it so open long polls end
	// at once instead of holding shutdown until their deadline.
	base       context.Context
	cancelBase context.CancelFunc
}

// stores are the repositories and locker of one backend.
type stores struct {
	creator app.Creator
	plans   plan.Repository
	tasks   task.Repository
	ckpts   checkpoint.Store
	locker  interface {
		orchestrator.Locker
		app.Holders
	}
	readiness func() api.Health
}

// New wires an executor: on Redis when cfg.RedisURL is set, else on the embedded in-memory
// store. Register custom stage kinds on Kinds() before Start.
func New(cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = orchestrator.DefaultLeaseTTL
	}
	s := &Server{cfg: cfg}
	st, err := s.stores()
	if err != nil {
		return nil, err
	}
	s.kinds = stagekind.Builtin(stagekind.HTTPOptions{})
	s.orch = orchestrator.New(st.plans, st.tasks, st.ckpts, st.locker, s.kinds,
		orchestrator.Config{Workers: cfg.Workers, LeaseTTL: cfg.LeaseTTL, Logger: cfg.Logger, Degraded: s.degraded})
	s.svc = app.New(app.Deps{
		Creator: st.creator, Plans: st.plans, Tasks: st.tasks, Checkpoints: st.ckpts,
		Kinds: s.kinds, Holders: st.locker, Runner: s.orch,
		RefuseNewPlans: func() bool { return cfg.RejectNewPlansWhileDegraded && s.degraded() },
	})
	s.base, s.cancelBase = context.WithCancel(context.Background())
	s.http = &http.Server{
		Handler:           api.NewRouter(s.svc, api.Options{Logger: cfg.Logger, Readiness: st.readiness}),
		BaseContext:       func(net.Listener) context.Context { return s.base },
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// No WriteTimeout: GET /v1/plans/{id}?wait= long-polls for up to app.MaxWait.
	}
	return s, nil
}

// stores builds the backend the configuration names.
func (s *Server) stores() (stores, error) {
	if s.cfg.RedisURL == "" {
		db := memrepo.New()
		return stores{creator: db, plans: db.Plans(), tasks: db.Tasks(), ckpts: db.Checkpoints(), locker: lock.NewMemory()}, nil
	}
	opts, err := redis.ParseURL(s.cfg.RedisURL)
	if err != nil {
		return stores{}, fmt.Errorf("server: --redis: %w", err)
	}
	// Short timeouts and one retry: a Redis that does not answer makes the executor degraded
	// (it keeps running on memory) within about a second, instead of stalling every run.
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout, opts.PoolTimeout = time.Second, time.Second, time.Second, time.Second
	opts.MaxRetries, opts.DialerRetries = 1, 1 // go-redis re-dials a refused connection 5 times by default
	s.redis = redis.NewClient(opts)
	keys := rediskey.New(s.cfg.Prefix)
	s.mon = outage.NewMonitor(s.cfg.Logger)
	s.store = redisrepo.New(s.redis, redisrepo.Options{
		Keys: keys, Monitor: s.mon, Logger: s.cfg.Logger,
		OnConflict: func(taskID string) { s.orch.Fenced(taskID) },
	})
	db := s.store
	return stores{
		creator: db, plans: db.Plans(), tasks: db.Tasks(), ckpts: db.Checkpoints(),
		locker:    lock.NewFailover(s.redis, lock.RedisOptions{Keys: keys, TTL: s.cfg.LeaseTTL, Logger: s.cfg.Logger}, s.mon),
		readiness: s.readiness,
	}, nil
}

// degraded reports whether the executor runs on memory because Redis is away.
func (s *Server) degraded() bool {
	if s.mon == nil {
		return false
	}
	down, _ := s.mon.Degraded()
	return down
}

// readiness reports Redis as ok or degraded (since when, and how much waits to be written
// back). A degraded executor is still ready: it keeps serving on memory.
func (s *Server) readiness() api.Health {
	down, since := s.mon.Degraded()
	if !down {
		return api.Health{Status: "ok", Redis: "ok"}
	}
	n := s.store.JournalLen()
	return api.Health{Status: "ok", Redis: "degraded", Since: &since, Journal: &n}
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
	if s.store != nil {
		s.store.Start(context.Background())
	}
	s.orch.Start()
	s.done = make(chan error, 1)
	go func() {
		err := s.http.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
	store := "memory"
	if s.redis != nil {
		store = "redis"
	}
	s.cfg.Logger.Info("executor serving", "addr", ln.Addr().String(), "store", store, "lease_ttl", s.cfg.LeaseTTL.String())
	return nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL returns the server's base URL.
func (s *Server) URL() string { return "http://" + s.Addr() }

// Done is closed with the serve loop's error when it stops on its own.
func (s *Server) Done() <-chan error { return s.done }

// Shutdown stops accepting requests, ends every run (tasks still running become INTERRUPTED,
// their checkpoints intact, their leases released) and waits for both, or for ctx.
func (s *Server) Shutdown(ctx context.Context) error {
	s.cancelBase()
	herr := s.http.Shutdown(ctx)
	oerr := s.orch.Stop(ctx)
	var rerr error
	if s.redis != nil {
		// A journal still waiting here (Redis away at shutdown) goes with the process.
		s.store.Stop()
		rerr = s.redis.Close()
	}
	return errors.Join(herr, oerr, rerr)
}
