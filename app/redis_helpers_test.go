package app_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/outage"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/redistest"
)

// redisStores returns the executor's Redis backend (store and failover locker, as server
// wires them) on a private redis-server, stopped when the test ends.
func redisStores(t *testing.T) apptest.Stores {
	t.Helper()
	client := redistest.Start(t).Client()
	logger := slog.New(slog.DiscardHandler)
	mon := outage.NewMonitor(logger)
	st := redisrepo.New(client, redisrepo.Options{Monitor: mon, Logger: logger})
	st.Start(context.Background())
	t.Cleanup(st.Stop)
	return apptest.Stores{
		Creator: st, Plans: st.Plans(), Tasks: st.Tasks(), Checkpoints: st.Checkpoints(),
		Locker: lock.NewFailover(client, lock.RedisOptions{Logger: logger}, mon),
	}
}
