package orchestrator_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/domain/availability"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/infra/dispatch"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/outage"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/orchestrator"
	"github.com/executor-dev/executor/stagekind"
)

// node is one executor on a real redis-server, wired as serve --redis wires it (the Redis
// store with its outage monitor, a failover locker, the Redis dispatch queue and the
// in-memory Fallback), without HTTP.
type node struct {
	svc      *app.Service
	orch     *orchestrator.Orchestrator
	kinds    *stagekind.Registry
	mon      *outage.Monitor
	queue    *dispatch.Redis
	fallback *dispatch.Memory
	holding  atomic.Int32 // stages of a hold kind (hold) running now
}

// nodeOptions says how a node reaches Redis and whether it runs tasks.
type nodeOptions struct {
	name      string
	storeAddr string // the store's and locker's Redis (a proxy, to cut this node off)
	queueAddr string // the dispatch queue's Redis
	workers   int
	idle      bool // not started: it takes no work (it only submits and commands)
	// settleFromRedis: one of several executors (serve's --degraded-new-plans=reject)
	settleFromRedis bool
	leaseTTL        time.Duration // the store's, the locker's and the orchestrator's; 0: a minute
	shared          bool          // the shared topology: store, locker and orchestrator
}

// redisClient returns a client with the executor's timeouts (1 s, one retry), closed when
// the test ends.
func redisClient(t *testing.T, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{
		Addr: addr, DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second,
		PoolTimeout: time.Second, MaxRetries: 1, DialerRetries: 1,
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// nodeLogger discards the executor's logs unless ORCH_LOG is set.
func nodeLogger() *slog.Logger {
	if os.Getenv("ORCH_LOG") == "" {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func newNode(t *testing.T, opts nodeOptions) *node {
	t.Helper()
	log := nodeLogger().With("executor", opts.name)
	n := &node{kinds: stagekind.Builtin(stagekind.HTTPOptions{}), mon: outage.NewMonitor(log)}
	storeClient := redisClient(t, opts.storeAddr)
	if opts.leaseTTL == 0 {
		opts.leaseTTL = time.Minute
	}
	store := redisrepo.New(storeClient, redisrepo.Options{
		Monitor: n.mon, Logger: log, LeaseTTL: opts.leaseTTL, Shared: opts.shared,
		OnRestored: func(lost bool) { n.orch.Restored(lost) },
	})
	locker := lock.NewFailover(storeClient, lock.RedisOptions{TTL: opts.leaseTTL, Logger: log, SelfFence: opts.shared}, n.mon)
	n.queue = dispatch.NewRedis(redisClient(t, opts.queueAddr), dispatch.RedisOptions{Logger: log})
	n.fallback = dispatch.NewMemory(dispatch.MemoryOptions{})
	cfg := orchestrator.Config{
		Name: opts.name, Workers: opts.workers, Logger: log, Rand: func() float64 { return 0.5 }, LeaseTTL: opts.leaseTTL,
		Availability: availability.Func(func() availability.State {
			down, _ := n.mon.Degraded()
			return availability.State{Reached: true, Degraded: down, ClaimsPaused: store.ClaimsPausedFor()}
		}), Shared: opts.settleFromRedis || opts.shared,
		Queue: dispatch.ForRedis(n.queue), Fallback: dispatch.ForMemory(n.fallback),
	}
	st := apptest.Stores{Creator: store, Plans: store.Plans(), Tasks: store.Tasks(), Checkpoints: store.Checkpoints(), Locker: locker}
	if opts.idle {
		n.orch = orchestrator.New(st.Plans, st.Tasks, st.Checkpoints, st.Locker, n.kinds, cfg)
		n.svc = app.New(app.Deps{
			Creator: st.Creator, Plans: st.Plans, Tasks: st.Tasks, Checkpoints: st.Checkpoints, Index: st.Tasks.(app.PlanIndex),
			Kinds: n.kinds, Holders: st.Locker, Launcher: n.orch, PlanControl: n.orch, TaskControl: n.orch, Reaper: n.orch, Watcher: n.orch, Unlocker: n.orch, Availability: apptest.Draining(n.orch),
		})
	} else {
		n.svc, n.orch = apptest.New(t, st, n.kinds, cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, store.Start(ctx))
	t.Cleanup(func() { require.NoError(t, store.Stop(context.Background())) })
	require.NoError(t, n.queue.Start(ctx))
	t.Cleanup(func() { require.NoError(t, n.queue.Stop(context.Background())) })
	return n
}

func (n *node) degraded() bool {
	down, _ := n.mon.Degraded()
	return down
}

func (n *node) submit(t *testing.T, req app.SubmitRequest) *plan.Plan {
	t.Helper()
	sub, err := n.svc.Submit(context.Background(), req)
	require.NoError(t, err)
	return sub.Plan.Plan
}

// planStatus reads the plan's status as the node's store holds it (Redis, while it answers).
func (n *node) planStatus(t *testing.T, planID string) plan.Status {
	t.Helper()
	v, err := n.svc.Plan(context.Background(), planID)
	require.NoError(t, err)
	return v.Plan.Status()
}
