package server

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/audit"
	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/batch"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/infra/outage"
	"github.com/executor-dev/executor/infra/redisconn"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/notify"
	"github.com/executor-dev/executor/orchestrator"
)

// stores are the repositories and locker of one backend.
type stores struct {
	creator app.Creator
	plans   plan.Repository
	tasks   task.Repository
	ckpts   checkpoint.Store
	index   app.PlanIndex
	counts  func() (map[plan.Status]int, map[task.Status]int) // by status, for the metrics
	// transcripts keeps what attempts printed (the runs write, the task queries read).
	transcripts interface {
		orchestrator.Transcripts
		app.Transcripts
	}
	locker interface {
		orchestrator.Locker
		app.Holders
	}
	audit audit.Log // the operators' actions
	// deliveries are where the deliveries of the plans' notifications stand.
	deliveries interface {
		notify.Deliveries
		app.DeliveryStates
	}
}

// backend is the store the configuration names: its stores and, on Redis, the client and
// what watches it (all nil on the in-memory store); on the in-memory store, its sweep.
type backend struct {
	stores
	sweep     service // the in-memory store's forgetting of ended plans (nil on Redis)
	redis     redis.UniversalClient
	redisMode redisconn.Mode   // which kind of Redis
	batched   *batch.Scripter  // the runs' scripts on the client's auto-pipeline
	store     *redisrepo.Store // the write-through store with its memory mirror
	mon       *outage.Monitor  // whether Redis is reachable
}

// storeHooks are what the Redis store tells the executor: they are the orchestrator's and the
// metrics', which are built after the store (on its repositories), so they are the
// executor's methods, reading its fields when called (see Executor.fenced).
type storeHooks struct {
	onConflict func(taskID string)
	onRestored func(lost bool)
}

// openBackend builds the backend cfg names: Redis when cfg.RedisURL is set, else the embedded
// in-memory store, which forgets an ended plan after cfg.Retention as Redis does.
func openBackend(cfg Config, hooks storeHooks) (backend, error) {
	if cfg.RedisURL == "" {
		db := memrepo.NewStore(memrepo.StoreOptions{Retention: cfg.Retention})
		return backend{sweep: db, stores: stores{creator: db, plans: db.Plans(), tasks: db.Tasks(), ckpts: db.Checkpoints(),
			index: db.Tasks(), locker: lock.NewMemory(), counts: db.StatusCounts, transcripts: db.Transcripts(), audit: db.Audit(), deliveries: db.Deliveries()}}, nil
	}
	conn, err := redisconn.Open(redisconn.Config{URL: cfg.RedisURL, Cluster: cfg.RedisCluster, MasterChanged: outage.ErrDataLost,
		Timeout: cfg.clientTimeout(), Warm: cfg.warmConns()})
	if err != nil {
		return backend{}, fmt.Errorf("server: --redis: %w", err)
	}
	cctx, cancel := context.WithTimeout(context.Background(), 2*cfg.clientTimeout())
	err = redisconn.Check(cctx, conn)
	cancel()
	if err != nil {
		_ = conn.Client.Close()
		return backend{}, fmt.Errorf("server: --redis: %w", err)
	}
	actx, cancel := context.WithTimeout(context.Background(), 2*cfg.clientTimeout())
	if advice := redisconn.Advice(actx, conn); advice != "" {
		cfg.Logger.Info(advice)
	}
	// Shared: the pool's connections (reads, liveness, the store's checks) are ready before
	// the first command on a slow link needs them (redisconn.Warm).
	if err := redisconn.Warm(actx, conn); err != nil {
		cfg.Logger.Warn("redis: connections not readied at start", "err", err)
	}
	cancel()
	// Runs' scripts (fence bumps, writes, leases, dones) share a pipeline (autoPipeline), each
	// wait for a reply bounded by the client timeout (clientTimeout: alone, a frozen Redis
	// costs a run one second, then it goes on degraded).
	batched, err := batch.New(conn.Client, batch.Options{Timeout: cfg.clientTimeout(), Pipeline: autoPipeline(cfg.shared()),
		Gather: gather(cfg.shared())})
	if err != nil {
		_ = conn.Client.Close()
		return backend{}, fmt.Errorf("server: redis auto-pipeline: %w", err)
	}
	mon := outage.NewMonitor(cfg.Logger)
	probe := time.Duration(0) // redisrepo's default
	if cfg.shared() {
		mon, probe = mon.Shared(), cfg.clientTimeout()
	}
	b := backend{redis: conn.Client, redisMode: conn.Mode, batched: batched, mon: mon}
	b.store = redisrepo.New(b.redis, redisrepo.Options{
		Keys: rediskey.New(cfg.Prefix), Monitor: b.mon, Logger: cfg.Logger, Batched: batched,
		OnConflict:   hooks.onConflict,
		OnRestored:   hooks.onRestored,
		LeaseTTL:     cfg.LeaseTTL, // Redis's data loss noticed within a lease TTL, however idle; new claims wait one after it
		TTL:          cfg.Retention,
		CacheTasks:   cfg.CacheTasks,
		Shared:       cfg.shared(), // Redis the only source of truth: nothing journaled, no read from memory
		ProbeTimeout: probe,
	})
	conn.OnMasterChange(b.store.MasterChanged) // Sentinel: the new master may lack acknowledged writes
	b.stores = b.redisStores(cfg)
	return b, nil
}

// redisStores are the Redis store's repositories and the failover locker (self-fencing where
// executors share the Redis).
func (b backend) redisStores(cfg Config) stores {
	db := b.store
	return stores{
		creator: db, plans: db.Plans(), tasks: db.Tasks(), ckpts: db.Checkpoints(), index: db.Tasks(), counts: db.StatusCounts,
		transcripts: db.Transcripts(), audit: db.Audit(), deliveries: db.Deliveries(),
		locker: lock.NewFailover(b.redis, lock.RedisOptions{Keys: rediskey.New(cfg.Prefix), TTL: cfg.LeaseTTL, Logger: cfg.Logger, Scripter: b.batched,
			SelfFence: cfg.shared()}, b.mon),
	}
}

// gatherWindow is how long a shared executor's runs' scripts wait for one another to go out as
// one batch (batch.Options.Gather).
const gatherWindow = time.Millisecond

// gather is the shared executor's gathering of its runs' scripts: the full-duplex pipeline
// writes each lone command at once, and the runs of slow stages come one by one, so that a
// rollout of 1,000 tenants with 1 s stages cost 2.7 write system calls per stage transition
// (and Redis a read and a reply for each). Gathered for up to 1 ms, about one in six remains:
// the executor's CPU per transition fell by about a quarter, Redis's by a third
// (docs/performance.md, issue 38), for at most 1 ms more per command. Alone, the half-duplex
// pipeline batches by itself (MaxFlushDelay).
func gather(shared bool) time.Duration {
	if shared {
		return gatherWindow
	}
	return 0
}

// fullDuplexHold is how long the shared executor's pipeline holds its connection, idle or not.
const fullDuplexHold = 24 * time.Hour

// autoPipeline configures the batching of runs' commands (their writes, fence bumps, leases,
// dones).
//
// Alone, half-duplex: up to three batches in flight, each gathered for at most 100 µs. One
// batch at a time (go-redis's default) makes the runs and Redis take turns: Redis idles while
// the runs prepare the next batch and the runs wait while Redis works it off; three let them
// overlap: about +40 % stage transitions/s on two cores (docs/performance.md), for up to 100 µs
// more per command of a lone run. Batches may then run out of order, which nothing relies on:
// a run waits for each command before its next, and every write is fenced and safe to repeat.
//
// Shared, full-duplex: the commands stream on one held connection per master, each answered
// one round trip after it was sent, however many are in flight. Half-duplex makes a command
// wait for a free batch behind those in flight as well: on a slow link (2 s round trips)
// nearly two round trips, past the leases' deadlines (docs/degraded.md, "Self-fencing
// leases"). A lease's refresh takes its round trip on the same stream.
func autoPipeline(shared bool) *redis.AutoPipelineOptions {
	o := redis.DefaultBlockingAutoPipelineOptions()
	if shared {
		// The held connection is kept: go-redis gives it back to the pool after a second
		// idle and every 5 s under load, waiting for every reply in flight first (a round
		// trip of stalled writes on a slow link), for per-connection hooks the executor does
		// not use (re-authentication by streaming credentials, maintenance notifications).
		o.FullDuplex = true
		o.FullDuplexIdleTimeout, o.FullDuplexMaxHold = fullDuplexHold, fullDuplexHold
		return o
	}
	o.MaxFlushDelay = 100 * time.Microsecond
	o.MaxConcurrentBatches, o.Unordered = 3, true
	return o
}
