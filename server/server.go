package server

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/auth"
	"github.com/executor-dev/executor/events"
	"github.com/executor-dev/executor/infra/batch"
	"github.com/executor-dev/executor/infra/dispatch"
	"github.com/executor-dev/executor/infra/eventstream"
	"github.com/executor-dev/executor/infra/outage"
	"github.com/executor-dev/executor/infra/redisconn"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/schedule"
	"github.com/executor-dev/executor/infra/secrets"
	"github.com/executor-dev/executor/infra/signals"
	"github.com/executor-dev/executor/metrics"
	"github.com/executor-dev/executor/notify"
	"github.com/executor-dev/executor/orchestrator"
	"github.com/executor-dev/executor/stagekind"
	"github.com/executor-dev/executor/wire"
)

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
	sweep     service               // the in-memory store's forgetting of ended plans; nil on Redis
	secrets   orchestrator.Secrets  // --secrets-dir; nil without one
	notifier  *notify.Deliverer     // delivers the plans' notifications
	mon       *outage.Monitor       // nil on the in-memory store
	events    *events.Hub           // every transition, for GET /v1/events
	stream    *eventstream.Stream   // writes the events to the Redis stream; nil on memory
	reader    *eventstream.Reader   // GET /v1/events on Redis: the stream every executor writes; nil on memory
	readiness func() wire.Health
	probe     func(context.Context) error // GET /readyz's write and read (nil on memory)
	metrics   *metrics.Registry           // GET /metrics
	sched     scheduler                   // starts scheduled plans
	signals   *signals.Redis              // operators' commands between executors; nil on the in-memory store
	dispatch  service                     // the plans' queues: dispatch.Memory, or dispatch.Redis shared by every executor
	members   *memberPort                 // the executors sharing the store; joined by Server.Start
	reach     reach                       // whether Redis was reached since the start (reach.go)
	self      selfURL                     // the HTTP API's base URL, for .ExecutorURL (selfurl.go)
	life      lifecycle                   // the services, started and stopped in order (lifecycle.go)
}

// scheduler is infra/schedule's Memory or Redis.
type scheduler interface {
	orchestrator.Scheduler
	service
	SetDue(due schedule.Due)
}

// NewExecutor wires an executor: on Redis when cfg.RedisURL is set, else on the embedded
// in-memory store. Register custom stage kinds on Kinds() before Start.
//
// What is built first calls what is built after it only through the executor's methods
// (fenced, restored, queued), which read the executor's fields when called: once it runs,
// never while NewExecutor builds it.
func NewExecutor(cfg Config) (*Executor, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Executor{cfg: cfg, events: events.NewHub(events.DefaultRingSize), members: &memberPort{name: cfg.Name}}
	if cfg.SecretsDir != "" {
		dir, err := secrets.Open(cfg.SecretsDir)
		if err != nil {
			return nil, fmt.Errorf("server: --secrets-dir: %w", err)
		}
		e.secrets = dir
	}
	b, err := openBackend(cfg, storeHooks{onConflict: e.fenced, onRestored: e.restored})
	if err != nil {
		return nil, err
	}
	e.redis, e.redisMode, e.batched, e.store, e.mon, e.sweep = b.redis, b.redisMode, b.batched, b.store, b.mon, b.sweep
	if e.store != nil {
		e.readiness, e.probe = e.topologyReadiness, e.readyProbe
	}
	source := e.wireEvents()
	e.kinds = stagekind.BuiltinWith(stagekind.Options{
		HTTP:       stagekind.HTTPOptions{AllowList: cfg.HTTPAllow},
		Exec:       stagekind.ExecOptions{Allow: cfg.ExecAllow, Env: cfg.ExecEnv},
		Prometheus: stagekind.PrometheusOptions{AllowList: cfg.PrometheusAllow},
	})
	e.metrics = metrics.New(metrics.Options{StatusCounts: b.counts, Degraded: e.Degraded, JournalLen: e.journalLen, Queued: e.queued})
	e.wireOrchestrator(b.stores)
	e.svc = app.New(app.Deps{
		Creator: b.creator, Plans: b.plans, Tasks: b.tasks, Checkpoints: b.ckpts, Index: b.index,
		Kinds: e.kinds, Holders: b.locker, Events: source, Members: e.members,
		Launcher: e.orch, PlanControl: e.orch, TaskControl: e.orch, Reaper: e.orch, Watcher: e.orch, Unlocker: e.orch,
		Availability:  e,
		Settled:       e.settled,
		Secrets:       e.secrets,
		Transcripts:   b.transcripts,
		Audit:         b.audit,
		Deliveries:    b.deliveries,
		DecidingRoles: []string{string(auth.RoleOperate)}, // the decisions' routes need operate (api/auth.go)
		Limits:        cfg.Limits,
		ExecutorURL:   e.self.get,
	})
	e.notifier = e.wireNotifier(b.stores)
	e.life.services = e.services(nil, nil) // what Stop stops without a Start
	return e, nil
}

// wireEvents builds, on Redis, the stream every executor writes its events to and the reader
// that serves GET /v1/events from it; it returns where GET /v1/events reads.
func (e *Executor) wireEvents() app.EventSource {
	if e.redis == nil {
		return e.events
	}
	keys := rediskey.New(e.cfg.Prefix)
	e.stream = eventstream.New(e.redis, eventstream.Options{Keys: keys, MaxLen: e.cfg.EventStreamMaxLen, Logger: e.cfg.Logger})
	e.events.Then(e.stream)
	e.reader = eventstream.NewReader(e.redis, eventstream.ReaderOptions{Keys: keys, Local: e.events, Logger: e.cfg.Logger})
	return e.reader
}

// wireOrchestrator builds the scheduler, the signals, the dispatch queues and the
// orchestrator on st, then hands the orchestrator to the scheduler and the signals.
func (e *Executor) wireOrchestrator(st stores) {
	cfg := e.cfg
	e.sched = schedule.NewMemory(schedule.MemoryOptions{Logger: cfg.Logger})
	if e.redis != nil { // one ZSET shared by every executor: exactly one starts each plan
		e.sched = schedule.NewRedis(e.redis, schedule.RedisOptions{Prefix: cfg.Prefix, Logger: cfg.Logger})
	}
	var sigs orchestrator.Signals
	var fallback orchestrator.Queue
	if e.redis != nil { // operators' commands reach the executor running the task at once
		e.signals = signals.New(e.redis, signals.Options{Keys: rediskey.New(cfg.Prefix), Logger: cfg.Logger})
		sigs = e.signals
	}
	mq := dispatch.NewMemory(dispatch.MemoryOptions{})
	queue, dq := dispatch.ForMemory(mq), service(mq)
	if e.redis != nil { // every executor takes work from every plan; the limits hold plan-wide
		rq := dispatch.NewRedis(e.redis, dispatch.RedisOptions{Prefix: cfg.Prefix, Logger: cfg.Logger, Scripter: e.batched})
		queue, dq = dispatch.ForRedis(rq), rq
		if !cfg.shared() {
			fallback = dispatch.ForMemory(mq) // alone, while Redis is away, work queued here runs here
		}
	}
	e.dispatch = dq
	e.orch = orchestrator.New(st.plans, st.tasks, st.ckpts, st.locker, e.kinds,
		orchestrator.Config{Name: cfg.Name, Cluster: e.members, Workers: cfg.Workers, LeaseTTL: cfg.LeaseTTL, Logger: cfg.Logger, Availability: e,
			Shared: cfg.shared(), Events: e.events, Metrics: e.metrics, Scheduler: e.sched, Signals: sigs, Queue: queue, Fallback: fallback,
			ExecutorURL: e.self.get, StopGrace: cfg.ShutdownTimeout, Secrets: e.secrets, Transcripts: st.transcripts,
			MaxOutputBytes: cfg.MaxOutputBytes, MaxTaskOutputBytes: cfg.MaxTaskOutputBytes})
	e.sched.SetDue(e.orch.StartScheduled)
	if e.signals != nil {
		e.signals.SetReceive(e.orch.Receive)
	}
}

// fenced is told by the Redis store that another executor won a task's write-back: the
// local run stops.
func (e *Executor) fenced(taskID string) {
	e.metrics.Fenced()
	e.orch.Fenced(taskID)
}

// restored is told by the Redis store that Redis answers again after an outage (lost: without
// the data this executor wrote).
func (e *Executor) restored(lost bool) { e.orch.Restored(lost) }

// queued reports how many tasks wait for a worker slot, for the metrics.
func (e *Executor) queued() int { return e.orch.Queued() }

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
func (e *Executor) redisReadiness() wire.Health {
	if e.notReady() {
		return wire.Health{Status: "unavailable", Redis: "unavailable", Reason: e.unreachedReason()}
	}
	down, since := e.mon.Degraded()
	if !down {
		return wire.Health{Status: "ok", Redis: "ok"}
	}
	n := e.store.JournalLen()
	return wire.Health{Status: "degraded", Redis: "degraded", Since: &since, Journal: &n, Reason: e.mon.Reason()}
}

// Name returns the executor's name (Config.Name, or its default).
func (e *Executor) Name() string { return e.cfg.Name }

// Kinds returns the stage kind registry, to register custom kinds.
func (e *Executor) Kinds() *stagekind.Registry { return e.kinds }

// Service returns the use cases.
func (e *Executor) Service() *app.Service { return e.svc }

// Redis returns the executor's Redis client (nil on the in-memory store), for tools that
// measure it; commands sent on it are the executor's own.
func (e *Executor) Redis() redis.UniversalClient { return e.redis }
