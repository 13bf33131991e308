package redisrepo_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/outage"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/redistest"
)

// startStoreTTL is a started store on client whose executors' lease TTL is leaseTTL.
func startStoreTTL(t *testing.T, client redis.UniversalClient, leaseTTL time.Duration) (*redisrepo.Store, *outage.Monitor) {
	t.Helper()
	mon := outage.NewMonitor(slog.New(slog.DiscardHandler))
	s := redisrepo.New(client, redisrepo.Options{Monitor: mon, Logger: slog.New(slog.DiscardHandler), LeaseTTL: leaseTTL})
	require.NoError(t, s.Start(context.Background()))
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	return s, mon
}

// After Redis lost its data, no executor claims a tenant for a new task for one lease TTL:
// the executor that was running the tenant takes it back first. A new Redis (no executor
// saw it before) takes claims at once.
func TestClaimsWaitALeaseTTLAfterRedisLostItsData(t *testing.T) {
	t.Parallel()
	const leaseTTL = 3 * time.Second
	srv := redistest.Start(t)
	ctx := context.Background()
	a, _ := startStoreTTL(t, fastClient(t, srv.Addr()), leaseTTL)
	b, _ := startStoreTTL(t, fastClient(t, srv.Addr()), leaseTTL)
	p, tasks := newPlan(t, "g1")
	require.NoError(t, a.CreatePlan(ctx, p, tasks), "a new Redis: claims at once")
	runStage(t, a, tasks[0].ID()) // a runs g1

	require.NoError(t, srv.Client().FlushAll(ctx).Err())
	lostAt := time.Now()
	again, againTasks := newPlan(t, "g1")
	err := b.CreatePlan(ctx, again, againTasks)
	require.ErrorIs(t, err, task.ErrClaimsPaused, "b saw the generation before: Redis lost its data")
	var paused *task.ClaimsPausedError
	require.ErrorAs(t, err, &paused)
	require.Greater(t, paused.RetryAfter, leaseTTL/2)
	require.LessOrEqual(t, paused.RetryAfter, leaseTTL)

	// An executor started after the loss waits all the same.
	c, _ := startStoreTTL(t, fastClient(t, srv.Addr()), leaseTTL)
	other, otherTasks := newPlan(t, "g2")
	require.ErrorIs(t, c.CreatePlan(ctx, other, otherTasks), task.ErrClaimsPaused)

	// Within the wait, a notices the loss by itself and writes g1's task back.
	fresh := redisrepo.New(srv.Client(), redisrepo.Options{})
	require.Eventually(t, func() bool {
		got, err := fresh.Tasks().Latest(ctx, "g1")
		return err == nil && got.ID() == tasks[0].ID()
	}, leaseTTL, 10*time.Millisecond, "a writes back before claims resume")

	require.Eventually(t, func() bool {
		return !errors.Is(b.CreatePlan(ctx, again, againTasks), task.ErrClaimsPaused)
	}, 10*leaseTTL, 20*time.Millisecond)
	require.GreaterOrEqual(t, time.Since(lostAt), leaseTTL*9/10, "claims waited about a lease TTL")
	require.ErrorIs(t, b.CreatePlan(ctx, again, againTasks), task.ErrTenantBusy, "g1 is a's again")
	require.NoError(t, c.CreatePlan(ctx, other, otherTasks), "a tenant nobody runs can be claimed")
}
