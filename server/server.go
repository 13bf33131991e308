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
	"github.com/executor-dev/executor/auth"
	"github.com/executor-dev/executor/console"
	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/events"
	"github.com/executor-dev/executor/infra/batch"
	"github.com/executor-dev/executor/infra/dispatch"
	"github.com/executor-dev/executor/infra/eventstream"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/members"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/infra/outage"
	"github.com/executor-dev/executor/infra/redisconn"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/schedule"
	"github.com/executor-dev/executor/infra/signals"
	"github.com/executor-dev/executor/metrics"
	"github.com/executor-dev/executor/orchestrator"
	"github.com/executor-dev/executor/stagekind"
)

// Config is the executor's configuration.
type Config struct {
	Addr string // listen address; "127.0.0.1:0" picks a free port
	// Name is the executor's name among the executors sharing its store (serve --name), in
	// every log line and in GET /v1/executors; it must match members.NamePattern (CheckName).
	// Default members.DefaultName(): "<hostname>-<pid>".
	Name    string
	Workers int // tasks running at once across all plans; default orchestrator.DefaultWorkers
	// RedisURL names the Redis (one node, a Cluster or a Sentinel-managed master:
	// redisconn's URL forms); empty: the embedded in-memory store.
	RedisURL string
	// RedisCluster makes a one-node RedisURL the seed of a Redis Cluster (--redis-cluster).
	RedisCluster bool
	Prefix       string        // Redis key prefix; default rediskey.DefaultPrefix
	LeaseTTL     time.Duration // tenant lease TTL; default orchestrator.DefaultLeaseTTL
	// Retention is how long Redis keeps an ended plan's keys, from its end (nothing of an
	// active plan expires); default redisrepo.DefaultTTL.
	Retention time.Duration
	// CacheTasks bounds the memory mirror's cache of tasks Redis holds (ended, or only read),
	// besides what this executor runs or accepted and what it journaled: 0 the default
	// (DefaultCacheTasks), negative no cache.
	CacheTasks int
	// RejectNewPlansWhileDegraded makes POST /v1/plans answer 503 while Redis is away
	// (--degraded-new-plans=reject), for operators who run several executors.
	RejectNewPlansWhileDegraded bool
	// StartDegraded (--start-degraded) lets an executor on Redis that has not reached it yet
	// since it started run degraded on memory, as during an outage (RejectNewPlansWhileDegraded
	// decides about new plans). Without it, such an executor is not ready (GET /readyz 503)
	// and answers new plans, the commands on what it cannot see and queries with app.ErrNotReady until
	// it has reached Redis once: it cannot tell which tenants other executors run. Later
	// outages follow RejectNewPlansWhileDegraded.
	StartDegraded bool
	Logger        *slog.Logger // default slog.Default()
	// EventHeartbeat is how often GET /v1/events writes a heartbeat; default
	// api.DefaultEventHeartbeat.
	EventHeartbeat time.Duration
	// EventStream is ignored (--events-stream, deprecated): on Redis every executor writes its
	// events to the stream <prefix>events and serves GET /v1/events from it.
	EventStream bool
	// EventStreamMaxLen caps the Redis stream of the events (XADD MAXLEN ~); default
	// eventstream.DefaultMaxLen.
	EventStreamMaxLen int64
	// Tokens are the bearer tokens the API accepts (EXECUTOR_TOKENS, --tokens-file). With none
	// the API is open; `serve` allows that on a loopback address only, unless --insecure.
	Tokens []auth.Token
	// HTTPAllow is the http stage kind's allow-list of hosts and CIDRs (--http-allow). Empty:
	// any destination but link-local and cloud metadata addresses.
	HTTPAllow []string
	// Limits bound submissions (--max-tenants, --max-stages, --max-params-bytes, --max-queued);
	// zero fields take the app defaults.
	Limits app.Limits
	// MaxBodyBytes bounds a request body (--max-body-bytes); default api.DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// ShutdownTimeout is how long Shutdown lets running tasks reach their next stage boundary
	// before cancelling their stages (--shutdown-timeout); default DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
}

// DefaultShutdownTimeout is Config.ShutdownTimeout's default.
const DefaultShutdownTimeout = 30 * time.Second

// joinTimeout bounds Server.Start's registration among the store's executors.
const joinTimeout = 5 * time.Second

// DefaultRetention is Config.Retention's default: how long Redis keeps an ended plan.
const DefaultRetention = redisrepo.DefaultTTL

// DefaultCacheTasks is Config.CacheTasks's default: the tasks the memory mirror caches.
const DefaultCacheTasks = redisrepo.DefaultCacheTasks

// Executor is a wired executor without its HTTP API: stores, locker, stage kinds,
// orchestrator and use cases. Server serves it over HTTP; the bench command runs it as it is.
type Executor struct {
	cfg       Config
	kinds     *stagekind.Registry
	orch      *orchestrator.Orchestrator
	svc       *app.Service
	redis     redis.UniversalClient // nil on the in-memory store
	redisMode redisconn.Mode        // which kind of Redis ("" on memory)
	batched   *batch.Scripter       // the runs' scripts on the client's auto-pipeline; nil on memory
	store     *redisrepo.Store      // nil on the in-memory store
	mon       *outage.Monitor       // nil on the in-memory store
	events    *events.Hub           // every transition, for GET /v1/events
	stream    *eventstream.Stream   // writes the events to the Redis stream; nil on memory
	reader    *eventstream.Reader   // GET /v1/events on Redis: the stream every executor writes; nil on memory
	readiness func() api.Health
	probe     func(context.Context) error // GET /readyz's write and read (nil on memory)
	metrics   *metrics.Registry           // GET /metrics
	sched     scheduler                   // starts scheduled plans
	signals   *signals.Redis              // operators' commands between executors; nil on the in-memory store
	dispatch  interface {                 // the plans' queues: dispatch.Memory, or dispatch.Redis shared by every executor
		Start(context.Context)
		Stop()
	}
	members *memberPort // the executors sharing the store; joined by Server.Start
	reach   reach       // whether Redis was reached since the start (reach.go)
	self    selfURL     // the HTTP API's base URL, for .ExecutorURL (selfurl.go)
}

// scheduler is infra/schedule's Memory or Redis.
type scheduler interface {
	orchestrator.Scheduler
	Start(due schedule.Due)
	Stop()
}

// stores are the repositories and locker of one backend.
type stores struct {
	batched redis.Scripter // the Redis client's AutoPipeline (nil on the in-memory store)
	creator app.Creator
	plans   plan.Repository
	tasks   task.Repository
	ckpts   checkpoint.Store
	index   app.PlanIndex
	counts  func() (map[plan.Status]int, map[task.Status]int) // by status, for the metrics
	locker  interface {
		orchestrator.Locker
		app.Holders
	}
}

// NewExecutor wires an executor: on Redis when cfg.RedisURL is set, else on the embedded
// in-memory store. Register custom stage kinds on Kinds() before Start.
func NewExecutor(cfg Config) (*Executor, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Name == "" {
		cfg.Name = members.DefaultName()
	}
	if err := CheckName(cfg.Name); err != nil {
		return nil, fmt.Errorf("server: --name: %w", err)
	}
	cfg.Logger = cfg.Logger.With("executor", cfg.Name)
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = orchestrator.DefaultLeaseTTL
	}
	if _, err := stagekind.ParseAllowList(cfg.HTTPAllow); err != nil {
		return nil, fmt.Errorf("server: --http-allow: %w", err)
	}
	e := &Executor{cfg: cfg, events: events.NewHub(events.DefaultRingSize), members: &memberPort{name: cfg.Name}}
	st, err := e.stores()
	if err != nil {
		return nil, err
	}
	var source app.EventSource = e.events
	if e.redis != nil { // the cluster's events: every executor writes the stream and reads it
		keys := rediskey.New(cfg.Prefix)
		e.stream = eventstream.New(e.redis, eventstream.Options{Keys: keys, MaxLen: cfg.EventStreamMaxLen, Logger: cfg.Logger})
		e.events.Then(e.stream)
		e.reader = eventstream.NewReader(e.redis, eventstream.ReaderOptions{Keys: keys, Local: e.events, Logger: cfg.Logger})
		source = e.reader
	}
	e.kinds = stagekind.Builtin(stagekind.HTTPOptions{Allow: cfg.HTTPAllow})
	e.metrics = metrics.New(metrics.Options{StatusCounts: st.counts, Degraded: e.Degraded, JournalLen: e.journalLen,
		Queued: func() int { return e.orch.Queued() }})
	e.sched = schedule.NewMemory(schedule.MemoryOptions{Logger: cfg.Logger})
	if e.redis != nil { // one ZSET shared by every executor: exactly one starts each plan
		e.sched = schedule.NewRedis(e.redis, schedule.RedisOptions{Prefix: cfg.Prefix, Logger: cfg.Logger})
	}
	var sigs orchestrator.Signals
	var queue dispatch.Port
	var fallback orchestrator.Queue
	if e.redis != nil { // operators' commands reach the executor running the task at once
		e.signals = signals.New(e.redis, signals.Options{Keys: rediskey.New(cfg.Prefix), Logger: cfg.Logger})
		sigs = e.signals
	}
	mq := dispatch.NewMemory(dispatch.MemoryOptions{})
	queue, e.dispatch = dispatch.ForMemory(mq), mq
	if e.redis != nil { // every executor takes work from every plan; the limits hold plan-wide
		rq := dispatch.NewRedis(e.redis, dispatch.RedisOptions{Prefix: cfg.Prefix, Logger: cfg.Logger, Scripter: st.batched})
		queue, e.dispatch = dispatch.ForRedis(rq), rq
		fallback = dispatch.ForMemory(mq) // while Redis is away, work queued here runs here
	}
	e.orch = orchestrator.New(st.plans, st.tasks, st.ckpts, st.locker, e.kinds,
		orchestrator.Config{Name: cfg.Name, Cluster: e.members, Workers: cfg.Workers, LeaseTTL: cfg.LeaseTTL, Logger: cfg.Logger, Degraded: e.Degraded,
			SettleFromRedis: cfg.RejectNewPlansWhileDegraded, ClaimsPaused: e.claimsPaused, Events: e.events, Metrics: e.metrics, Scheduler: e.sched, Signals: sigs, Queue: queue, Fallback: fallback,
			ExecutorURL: e.self.get})
	var shared func() bool // other executors share the store: commands must reach it
	if cfg.RejectNewPlansWhileDegraded {
		shared = e.Degraded
	}
	e.svc = app.New(app.Deps{
		Creator: st.creator, Plans: st.plans, Tasks: st.tasks, Checkpoints: st.ckpts, Index: st.index,
		Kinds: e.kinds, Holders: st.locker, Runner: e.orch, Events: source, Members: e.members,
		RefuseNewPlans: func() bool { return cfg.RejectNewPlansWhileDegraded && e.Degraded() },
		Degraded:       shared,
		NotReady:       e.notReady,
		ShuttingDown:   e.orch.ShuttingDown,
		Limits:         cfg.Limits,
		ExecutorURL:    e.self.get,
	})
	return e, nil
}

// stores builds the backend the configuration names.
func (e *Executor) stores() (stores, error) {
	if e.cfg.RedisURL == "" {
		db := memrepo.New()
		return stores{creator: db, plans: db.Plans(), tasks: db.Tasks(), ckpts: db.Checkpoints(), index: db.Tasks(), locker: lock.NewMemory(), counts: db.StatusCounts}, nil
	}
	conn, err := redisconn.Open(redisconn.Config{URL: e.cfg.RedisURL, Cluster: e.cfg.RedisCluster, MasterChanged: outage.ErrDataLost})
	if err != nil {
		return stores{}, fmt.Errorf("server: --redis: %w", err)
	}
	cctx, cancel := context.WithTimeout(context.Background(), 2*redisconn.Timeout)
	err = redisconn.Check(cctx, conn)
	cancel()
	if err != nil {
		_ = conn.Client.Close()
		return stores{}, fmt.Errorf("server: --redis: %w", err)
	}
	e.redis, e.redisMode = conn.Client, conn.Mode
	actx, cancel := context.WithTimeout(context.Background(), 2*redisconn.Timeout)
	if advice := redisconn.Advice(actx, conn); advice != "" {
		e.cfg.Logger.Info(advice)
	}
	cancel()
	// Runs' scripts (fence bumps, writes, leases, dones) share pipelines: many runs' commands
	// travel in one round trip (docs/performance.md), each wait for a reply bounded by the
	// read timeout (a frozen Redis costs a run one second, then it goes on degraded).
	batched, err := batch.New(e.redis, batch.Options{Timeout: redisconn.Timeout, Pipeline: autoPipeline()})
	if err != nil {
		return stores{}, fmt.Errorf("server: redis auto-pipeline: %w", err)
	}
	e.batched = batched
	keys := rediskey.New(e.cfg.Prefix)
	e.mon = outage.NewMonitor(e.cfg.Logger)
	e.store = redisrepo.New(e.redis, redisrepo.Options{
		Keys: keys, Monitor: e.mon, Logger: e.cfg.Logger, Batched: batched,
		OnConflict: func(taskID string) { e.metrics.Fenced(); e.orch.Fenced(taskID) },
		OnRestored: func(lost bool) { e.orch.Restored(lost) },
		LeaseTTL:   e.cfg.LeaseTTL, // Redis's data loss noticed within a lease TTL, however idle; new claims wait one after it
		TTL:        e.cfg.Retention,
		CacheTasks: e.cfg.CacheTasks,
	})
	e.readiness, e.probe = e.redisReadiness, e.store.Ready
	conn.OnMasterChange(e.store.MasterChanged) // Sentinel: the new master may lack acknowledged writes
	db := e.store
	return stores{
		batched: batched,
		creator: db, plans: db.Plans(), tasks: db.Tasks(), ckpts: db.Checkpoints(), index: db.Tasks(), counts: db.StatusCounts,
		locker: lock.NewFailover(e.redis, lock.RedisOptions{Keys: keys, TTL: e.cfg.LeaseTTL, Logger: e.cfg.Logger, Scripter: batched}, e.mon),
	}, nil
}

// autoPipeline configures the batching of runs' commands. One batch in flight at a time (the
// default) makes the runs and Redis take turns: Redis idles while the runs prepare the next
// batch and the runs wait while Redis works it off. Up to three batches in flight, each
// gathered for at most 100 µs, let them overlap: about +40 % stage transitions/s on two cores
// (docs/performance.md), for up to 100 µs more per command of a lone run. Batches may then
// run out of order, which nothing relies on: a run waits for each command before its next,
// and every write is fenced and safe to repeat.
func autoPipeline() *redis.AutoPipelineOptions {
	o := redis.DefaultBlockingAutoPipelineOptions()
	o.MaxConcurrentBatches, o.Unordered = 3, true
	o.MaxFlushDelay = 100 * time.Microsecond
	return o
}

// Degraded reports whether the executor runs on memory because Redis is away.
func (e *Executor) Degraded() bool {
	if e.mon == nil {
		return false
	}
	down, _ := e.mon.Degraded()
	return down
}

// claimsPaused reports how long claims still wait after Redis lost data (0 on memory).
func (e *Executor) claimsPaused() time.Duration {
	if e.store == nil {
		return 0
	}
	return e.store.ClaimsPausedFor()
}

// journalLen reports how many writes wait to be written back to Redis (0 on memory).
func (e *Executor) journalLen() int {
	if e.store == nil {
		return 0
	}
	return e.store.JournalLen()
}

// redisReadiness reports Redis as unavailable until it was reached since the start (see
// notReady), then as ok or degraded: since when, why (the Redis error that began the outage)
// and how much waits to be written back. A degraded executor keeps running
// and serving on memory, but is not ready (503): a load balancer then prefers the executors
// that reach Redis.
func (e *Executor) redisReadiness() api.Health {
	if e.notReady() {
		return api.Health{Status: "unavailable", Redis: "unavailable", Reason: e.unreachedReason()}
	}
	down, since := e.mon.Degraded()
	if !down {
		return api.Health{Status: "ok", Redis: "ok"}
	}
	n := e.store.JournalLen()
	return api.Health{Status: "degraded", Redis: "degraded", Since: &since, Journal: &n, Reason: e.mon.Reason()}
}

// Name returns the executor's name (Config.Name, or its default).
func (e *Executor) Name() string { return e.cfg.Name }

// Kinds returns the stage kind registry, to register custom kinds.
func (e *Executor) Kinds() *stagekind.Registry { return e.kinds }

// Metrics returns the executor's metrics (served at GET /metrics).
func (e *Executor) Metrics() *metrics.Registry { return e.metrics }

// Service returns the use cases.
func (e *Executor) Service() *app.Service { return e.svc }

// Redis returns the executor's Redis client (nil on the in-memory store), for tools that
// measure it; commands sent on it are the executor's own.
func (e *Executor) Redis() redis.UniversalClient { return e.redis }

// Start starts the store's probe and the orchestrator.
func (e *Executor) Start() {
	if e.store != nil {
		e.store.Start(context.Background())
		e.watchReach()
	}
	if e.stream != nil {
		e.stream.Start()
		e.reader.Start()
	}
	e.dispatch.Start(context.Background())
	e.orch.Start()
	if e.signals != nil {
		if err := e.signals.Start(context.Background(), e.orch.Receive); err != nil {
			e.cfg.Logger.Error("signals: start", "err", err)
		}
	}
	e.sched.Start(e.orch.StartScheduled)
}

// Drain is the graceful part of a shutdown: the executor takes no new work (new plans,
// retries and resumes answer 503), tasks queued to start become INTERRUPTED, running tasks
// stop at their next stage boundary, and after Config.ShutdownTimeout their stages are
// cancelled. Every task not done ends INTERRUPTED with its checkpoint intact and its lease
// released. Queries, pauses and cancels are still served meanwhile. It returns when every run
// has ended, or when ctx ends.
func (e *Executor) Drain(ctx context.Context) error {
	timeout := e.cfg.ShutdownTimeout
	if timeout <= 0 {
		timeout = DefaultShutdownTimeout
	}
	e.cfg.Logger.Info("executor draining: no new work; running tasks stop at their next stage boundary",
		"shutdown_timeout", timeout.String())
	e.sched.Stop() // a plan that comes due now is left to another executor, or to the next start
	return e.orch.Shutdown(ctx, timeout)
}

// CutShort cuts a Drain short (serve's second SIGTERM): the stages still running are
// cancelled now, as when Config.ShutdownTimeout runs out; their tasks end INTERRUPTED with
// their checkpoints intact and their leases released. It returns once every run has ended,
// or when ctx ends.
func (e *Executor) CutShort(ctx context.Context) error { return e.orch.Stop(ctx) }

// Stop ends every run at once (tasks still running become INTERRUPTED, their checkpoints
// intact, their leases released; Drain first for a graceful end), deregisters the executor
// from its store's executors, stops the store's probe and closes the Redis client.
func (e *Executor) Stop(ctx context.Context) error {
	e.reach.stopWatch()
	e.sched.Stop()
	oerr := e.orch.Stop(ctx)
	e.dispatch.Stop()
	e.leave(ctx) // after the runs (it counted them), before the client closes
	var rerr error
	if e.signals != nil { // commands still reach the runs while they drain
		rerr = e.signals.Stop(ctx)
	}
	if e.stream != nil { // its last events are the runs' ends: after the orchestrator, before the client
		rerr = errors.Join(rerr, e.reader.Stop(ctx), e.stream.Stop(ctx))
	}
	if e.redis != nil {
		// A journal still waiting here (Redis away at shutdown) goes with the process.
		e.store.Stop()
		rerr = errors.Join(rerr, e.batched.Close(), e.redis.Close())
	}
	return errors.Join(oerr, rerr)
}

// Server is a wired executor serving its HTTP API.
type Server struct {
	*Executor
	http *http.Server
	ln   net.Listener
	done chan error
	// base is every request's parent context; Shutdown cancels it so open long polls end
	// at once instead of holding shutdown until their deadline.
	base       context.Context
	cancelBase context.CancelFunc
}

// New wires an executor (see NewExecutor) and its HTTP API.
func New(cfg Config) (*Server, error) {
	exe, err := NewExecutor(cfg)
	if err != nil {
		return nil, err
	}
	s := &Server{Executor: exe}
	s.base, s.cancelBase = context.WithCancel(context.Background())
	s.http = &http.Server{
		Handler:           api.NewRouter(exe.svc, api.Options{Name: exe.cfg.Name, Logger: exe.cfg.Logger, MaxBodyBytes: exe.cfg.MaxBodyBytes, Readiness: exe.readiness, Probe: exe.probe, Unavailable: outage.Is, EventHeartbeat: exe.cfg.EventHeartbeat, Console: console.Handler(), Metrics: exe.metrics.Handler(), ObserveRequest: exe.metrics.ObserveRequest, Auth: auth.NewKeys(exe.cfg.Tokens)}),
		BaseContext:       func(net.Listener) context.Context { return s.base },
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// No WriteTimeout: GET /v1/plans/{id}?wait= long-polls for up to app.MaxWait.
	}
	return s, nil
}

// Start listens on the configured address, registers the executor among its store's
// executors, and serves in the background. It fails, wrapping members.ErrNameInUse, when a
// live executor on the same Redis has the same name.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("server: listen %s: %w", s.cfg.Addr, err)
	}
	jctx, cancel := context.WithTimeout(context.Background(), joinTimeout)
	defer cancel()
	if err := s.join(jctx, ln.Addr().String()); err != nil {
		_ = ln.Close()
		return fmt.Errorf("server: %w", err)
	}
	s.ln = ln
	s.self.set(ln.Addr())
	s.Executor.Start()
	s.done = make(chan error, 1)
	go func() {
		err := s.http.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
	attrs := []any{"addr", ln.Addr().String(), "lease_ttl", s.cfg.LeaseTTL.String()}
	switch {
	case s.redis == nil:
		attrs = append(attrs, "store", "memory")
	case s.reach.reached.Load():
		attrs = append(attrs, "store", "redis", "redis", "ok")
	default:
		attrs = append(attrs, "store", "redis", "redis", "unreachable", "err", s.mon.Reason())
	}
	s.cfg.Logger.Info("executor serving", attrs...)
	if s.notReady() {
		s.cfg.Logger.Warn("redis not reached since start: not ready, new plans, commands on other executors' work and queries refused until it is (serve --start-degraded runs on memory meanwhile)",
			"err", s.mon.Reason())
	}
	return nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL returns the server's base URL.
func (s *Server) URL() string { return "http://" + s.Addr() }

// Done is closed with the serve loop's error when it stops on its own.
func (s *Server) Done() <-chan error { return s.done }

// Shutdown drains the executor while still serving the API (see Executor.Drain: new plans
// get 503, queries keep working), then stops accepting requests and stops the executor (see
// Executor.Stop), or gives up when ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	derr := s.Drain(ctx)
	s.cancelBase()
	herr := s.http.Shutdown(ctx)
	return errors.Join(derr, herr, s.Executor.Stop(ctx))
}
