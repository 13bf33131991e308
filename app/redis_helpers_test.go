package app_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/infra/dispatch"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/outage"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/orchestrator"
)

// redisStores returns the executor's Redis backend (store and failover locker, as server
// wires them) on a private redis-server, stopped when the test ends.
func redisStores(t *testing.T) apptest.Stores {
	t.Helper()
	st, _ := redisWired(t)
	return st
}

// redisWired is redisStores plus the orchestrator configuration of serve --redis: the Redis
// dispatch queue, shared by every executor on that Redis (started, stopped when t ends).
func redisWired(t *testing.T) (apptest.Stores, orchestrator.Config) {
	t.Helper()
	w := wireRedis(t, redistest.Start(t).Client(), false)
	return w.stores, w.cfg
}

// redisWiring is the executor's Redis backend wired on one client, with its outage monitor.
type redisWiring struct {
	stores apptest.Stores
	cfg    orchestrator.Config
	store  *redisrepo.Store
	mon    *outage.Monitor
}

// wireRedis wires the executor's Redis backend (store, failover locker, dispatch queue) on
// client, started, stopped when t ends; shared: as in the shared topology (a store that never
// journals an outage, self-fencing leases).
func wireRedis(t *testing.T, client *redis.Client, shared bool) redisWiring {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	queue := dispatch.NewRedis(client, dispatch.RedisOptions{Logger: logger})
	require.NoError(t, queue.Start(context.Background()))
	t.Cleanup(func() { require.NoError(t, queue.Stop(context.Background())) })
	mon := outage.NewMonitor(logger)
	st := redisrepo.New(client, redisrepo.Options{Monitor: mon, Logger: logger, Shared: shared})
	require.NoError(t, st.Start(context.Background()))
	t.Cleanup(func() { require.NoError(t, st.Stop(context.Background())) })
	return redisWiring{
		stores: apptest.Stores{
			Creator: st, Plans: st.Plans(), Tasks: st.Tasks(), Checkpoints: st.Checkpoints(),
			Locker: lock.NewFailover(client, lock.RedisOptions{Logger: logger, SelfFence: shared}, mon),
		},
		cfg: orchestrator.Config{Queue: dispatch.ForRedis(queue), Shared: shared}, store: st, mon: mon,
	}
}
