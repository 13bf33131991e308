package lock_test

import (
	"context"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/lease"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/lock/locktest"
	"github.com/executor-dev/executor/infra/outage"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redistest"
)

// selfFenceTTL is the lease TTL of the self-fencing tests: the deadline is 80 % of it.
const selfFenceTTL = 600 * time.Millisecond

// newSelfFencing returns a self-fencing Failover locker reaching srv through a fault proxy
// (so that the test can cut it off), and a raw client on srv itself.
func newSelfFencing(t *testing.T) (*lock.Failover, *redistest.FaultProxy, *redis.Client) {
	t.Helper()
	srv := redistest.Start(t)
	proxy := srv.NewFaultProxy(redistest.Faults{})
	client := redis.NewClient(&redis.Options{Addr: proxy.Addr(), MaxRetries: 1, DialTimeout: 100 * time.Millisecond,
		ReadTimeout: 100 * time.Millisecond, WriteTimeout: 100 * time.Millisecond, PoolTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { _ = client.Close() })
	log := slog.New(slog.DiscardHandler)
	locker := lock.NewFailover(client, lock.RedisOptions{Keys: rediskey.New(""), TTL: selfFenceTTL, Logger: log, SelfFence: true},
		outage.NewMonitor(log))
	return locker, proxy, srv.Client()
}

// A self-fencing lease cut off from Redis counts itself lost at its deadline, while Redis
// still holds its key: its holder stops before anybody else can take the tenant. Until then,
// the deadline moves with every refresh Redis confirms.
func TestSelfFencingLeaseIsLostBeforeItsKeyExpires(t *testing.T) {
	t.Parallel()
	locker, proxy, raw := newSelfFencing(t)
	ctx := context.Background()
	before := time.Now()
	l, err := locker.Acquire(ctx, "t1", "p:task1@a")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Release(context.Background()) })
	first := l.Deadline()
	require.False(t, first.IsZero(), "a self-fencing lease has a deadline")
	assert.WithinDuration(t, before.Add(selfFenceTTL-lease.Margin(selfFenceTTL)), first, 100*time.Millisecond)

	require.Eventually(t, func() bool { return l.Deadline().After(first) }, 2*selfFenceTTL, 10*time.Millisecond,
		"a confirmed refresh moves the deadline")

	proxy.Cut()
	select {
	case <-l.Lost():
	case <-time.After(3 * selfFenceTTL):
		require.FailNow(t, "the lease was not lost at its deadline while Redis was away")
	}
	lostAt := time.Now()
	assert.False(t, lostAt.Before(l.Deadline()), "lost at (not before) its deadline")
	left, err := raw.PTTL(ctx, rediskey.New("").TenantLock("t1")).Result()
	require.NoError(t, err)
	assert.Positive(t, left, "Redis still holds the key when the holder stops: nobody else can take the tenant before")
}

// A self-fencing locker never takes a lease on memory: with Redis away, Acquire fails with
// Redis's error (not lease.ErrHeld), and the tenant is free for the next try once Redis is back.
func TestSelfFencingLockerTakesNoLeaseWhileRedisIsAway(t *testing.T) {
	t.Parallel()
	locker, proxy, raw := newSelfFencing(t)
	ctx := context.Background()
	proxy.Cut()
	_, err := locker.Acquire(ctx, "t2", "p:task2@a")
	require.Error(t, err)
	assert.NotErrorIs(t, err, lease.ErrHeld)
	assert.True(t, outage.Is(err), "the error is Redis's outage: %v", err)

	proxy.Restore()
	l, err := locker.Acquire(ctx, "t2", "p:task2@a")
	require.NoError(t, err, "nothing of the refused acquisition holds the tenant")
	defer func() { _ = l.Release(ctx) }()
	owner, err := raw.Get(ctx, rediskey.New("").TenantLock("t2")).Result()
	require.NoError(t, err)
	assert.Contains(t, owner, "p:task2@a")
}

// A lease that does not self-fence (an executor alone on its Redis) has no deadline and goes
// on while Redis is away.
func TestFailoverLeaseWithoutSelfFencingHasNoDeadline(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	locker, _ := newFailover(t, srv)
	l, err := locker.Acquire(context.Background(), "t3", "p:task3@a")
	require.NoError(t, err)
	defer func() { _ = l.Release(context.Background()) }()
	assert.True(t, l.Deadline().IsZero())
}

// A self-fencing lease starts its watchdog only once its first refresh is due (a tenth of the
// TTL after it was taken): released before, it never had one, and deleted its key; force
// released in this process before, it is lost at once all the same; held longer, its
// refreshes move its deadline as before. Not parallel: it counts the process's goroutines.
func TestSelfFencingLeaseWatchesOnlyOnceARefreshIsDue(t *testing.T) {
	const ttl = 10 * time.Second // the first refresh is due a second after the acquisition
	srv := redistest.Start(t)
	log := slog.New(slog.DiscardHandler)
	locker := lock.NewFailover(srv.Client(), lock.RedisOptions{Keys: rediskey.New(""), TTL: ttl, Logger: log, SelfFence: true},
		outage.NewMonitor(log))
	ctx := context.Background()
	warm, err := locker.Acquire(ctx, "warm", "p:warm@a")
	require.NoError(t, err)
	require.NoError(t, warm.Release(ctx))
	before := redistest.SettledGoroutines(t)

	short, err := locker.Acquire(ctx, "t1", "p:task1@a")
	require.NoError(t, err)
	assert.Equal(t, before, runtime.NumGoroutine(), "no watchdog before the first refresh is due")
	require.NoError(t, short.Release(ctx))
	redistest.RequireGoroutinesBackTo(t, before)
	n, err := srv.Client().Exists(ctx, rediskey.New("").TenantLock("t1")).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "released: the key is deleted")

	forced, err := locker.Acquire(ctx, "t2", "p:task2@a")
	require.NoError(t, err)
	_, ok, err := locker.ForceRelease(ctx, "t2")
	require.NoError(t, err)
	require.True(t, ok)
	took := locktest.WaitLost(t, forced, time.Second)
	assert.Less(t, took, ttl/10, "lost at once, not at the first refresh")
	require.NoError(t, forced.Release(ctx))

	long, err := locker.Acquire(ctx, "t3", "p:task3@a")
	require.NoError(t, err)
	first := long.Deadline()
	require.Eventually(t, func() bool { return long.Deadline().After(first) }, ttl/2, 20*time.Millisecond,
		"the watchdog started and Redis confirmed a refresh")
	locktest.RequireNotLost(t, long)
	require.NoError(t, long.Release(ctx))
	redistest.RequireGoroutinesBackTo(t, before)
}
