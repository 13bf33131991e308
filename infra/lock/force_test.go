package lock_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
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

// forceTTL is the Redis lease TTL of the force-release tests: a refresh every 200ms, so a
// Redis lease finds its key gone soon.
const forceTTL = 600 * time.Millisecond

// forceLocker is the contract an operator's unlock runs against: every locker has it.
type forceLocker interface {
	Acquire(ctx context.Context, tenantID, owner string) (lease.Lease, error)
	Holder(ctx context.Context, tenantID string) (lease.Holder, bool, error)
	ForceRelease(ctx context.Context, tenantID string) (lease.Holder, bool, error)
}

// forceSubject is one locker under test, with a raw client on its Redis (nil for Memory).
type forceSubject struct {
	locker forceLocker
	raw    *redis.Client
}

// requireRedisTTL checks the time left of a Redis key taken with ttl.
func requireRedisTTL(t *testing.T, got, ttl time.Duration) {
	t.Helper()
	assert.Positive(t, got)
	assert.LessOrEqual(t, got, ttl)
}

// newForceFailover returns a Failover locker on srv with leases of ttl, a client of its own
// (with options opts) and a monitor of its own: one executor process.
func newForceFailover(t *testing.T, srv *redistest.Server, ttl time.Duration, opts ...func(*redis.Options)) (*lock.Failover, *outage.Monitor) {
	t.Helper()
	o := &redis.Options{Addr: srv.Addr()}
	for _, opt := range opts {
		opt(o)
	}
	client := redis.NewClient(o)
	t.Cleanup(func() { _ = client.Close() })
	log := slog.New(slog.DiscardHandler)
	mon := outage.NewMonitor(log)
	return lock.NewFailover(client, lock.RedisOptions{Keys: rediskey.New(""), TTL: ttl, Logger: log}, mon), mon
}

// acquireFor takes tenant's lease for owner on locker and releases it when the test ends.
func acquireFor(t *testing.T, locker forceLocker, tenant, owner string) lease.Lease {
	t.Helper()
	l, err := locker.Acquire(context.Background(), tenant, owner)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Release(context.Background()) })
	return l
}

// requireNotHeld checks that locker reports tenant as not held, and that its Redis (if any)
// has no key for it.
func (s forceSubject) requireNotHeld(t *testing.T, tenant string) {
	t.Helper()
	h, held, err := s.locker.Holder(context.Background(), tenant)
	require.NoError(t, err)
	assert.False(t, held, "held by %q", h.Owner)
	if s.raw != nil {
		n, err := s.raw.Exists(context.Background(), lockKey(tenant)).Result()
		require.NoError(t, err)
		assert.Zero(t, n, "the key of %s exists", tenant)
	}
}

// requireHeldBy checks that locker reports tenant held by owner, and that its Redis (if any)
// holds the key for owner.
func (s forceSubject) requireHeldBy(t *testing.T, tenant, owner string) {
	t.Helper()
	h, held, err := s.locker.Holder(context.Background(), tenant)
	require.NoError(t, err)
	require.True(t, held, "tenant %s not held", tenant)
	assert.Equal(t, owner, h.Owner)
	if s.raw != nil {
		val, err := s.raw.Get(context.Background(), lockKey(tenant)).Result()
		require.NoError(t, err, "the key of %s", tenant)
		assert.True(t, strings.HasSuffix(val, owner), "value %q ends with %q", val, owner)
	}
}

// requireLostNow fails unless l is lost already.
func requireLostNow(t *testing.T, l lease.Lease) {
	t.Helper()
	select {
	case <-l.Lost():
	default:
		require.FailNow(t, "lease not lost")
	}
}

func TestRedisForceReleaseReturnsWhatItRemoved(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		value     string
		expiry    time.Duration // 0: none
		wantOwner string
		wantTTL   func(t *testing.T, got time.Duration)
	}{
		{
			name:      "key of another process",
			value:     otherValue("plan-9:task-z"),
			expiry:    time.Minute,
			wantOwner: "plan-9:task-z",
			wantTTL: func(t *testing.T, got time.Duration) {
				assert.Greater(t, got, 50*time.Second)
				assert.LessOrEqual(t, got, time.Minute)
			},
		},
		{
			name:      "key without expiry",
			value:     otherValue("p:t"),
			wantOwner: "p:t",
			wantTTL:   func(t *testing.T, got time.Duration) { assert.Zero(t, got) },
		},
		{
			name:    "value without an owner",
			value:   "short",
			expiry:  time.Minute,
			wantTTL: func(t *testing.T, got time.Duration) { assert.Positive(t, got) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newRedisFixture(t, forceTTL)
			require.NoError(t, f.raw.Set(ctx, lockKey("t1"), tt.value, tt.expiry).Err())

			h, ok, err := f.locker.ForceRelease(ctx, "t1")
			require.NoError(t, err)
			require.True(t, ok)
			assert.Equal(t, tt.wantOwner, h.Owner)
			tt.wantTTL(t, h.TTL)
			n, err := f.raw.Exists(ctx, lockKey("t1")).Result()
			require.NoError(t, err)
			assert.Zero(t, n, "the key is gone")
		})
	}
}

func TestForceReleaseFromAnotherProcess(t *testing.T) {
	t.Parallel()
	releasers := []struct {
		name string
		new  func(t *testing.T, srv *redistest.Server) forceLocker
	}{
		{
			name: "redis",
			new: func(t *testing.T, srv *redistest.Server) forceLocker {
				return lock.NewRedis(srv.Client(), lock.RedisOptions{TTL: forceTTL, Logger: slog.New(slog.DiscardHandler)})
			},
		},
		{
			name: "failover",
			new: func(t *testing.T, srv *redistest.Server) forceLocker {
				locker, _ := newForceFailover(t, srv, forceTTL)
				return locker
			},
		},
	}
	for _, rel := range releasers {
		t.Run(rel.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newRedisFixture(t, forceTTL) // the holding process, on a Redis locker
			s := forceSubject{locker: rel.new(t, f.srv), raw: f.raw}
			old := f.acquire(t, "t1", "plan-1:task-a")

			h, ok, err := s.locker.ForceRelease(ctx, "t1")
			require.NoError(t, err)
			require.True(t, ok)
			assert.Equal(t, "plan-1:task-a", h.Owner)
			requireRedisTTL(t, h.TTL, forceTTL)
			s.requireNotHeld(t, "t1")

			next := acquireFor(t, s.locker, "t1", "plan-2:task-b")
			took := locktest.WaitLost(t, old, 5*forceTTL)
			t.Logf("lost %v after the new Acquire (TTL %v)", took, forceTTL)
			require.NoError(t, old.Release(ctx))
			s.requireHeldBy(t, "t1", "plan-2:task-b")
			locktest.RequireNotLost(t, next)
		})
	}
}

func TestForceReleaseErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("redis down", func(t *testing.T) {
		t.Parallel()
		f := newRedisFixture(t, forceTTL, failFast)
		f.srv.Kill()
		h, ok, err := f.locker.ForceRelease(ctx, "t1")
		require.Error(t, err)
		assert.False(t, ok)
		assert.Equal(t, lease.Holder{}, h)
		assert.True(t, strings.HasPrefix(err.Error(), "lock: force-release tenant t1: "), err.Error())
		assert.NotErrorIs(t, err, redis.Nil)
		assert.NotErrorIs(t, err, lease.ErrHeld)
	})
	t.Run("redis: the caller's cancellation", func(t *testing.T) {
		t.Parallel()
		f := newRedisFixture(t, forceTTL)
		l := f.acquire(t, "t1", "p:a")
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		_, ok, err := f.locker.ForceRelease(canceled, "t1")
		require.ErrorIs(t, err, context.Canceled)
		assert.False(t, ok)
		requireNotLostFor(t, l, forceTTL/2)
	})
	t.Run("failover: the caller's cancellation is no outage", func(t *testing.T) {
		t.Parallel()
		srv := redistest.Start(t)
		locker, mon := newForceFailover(t, srv, forceTTL)
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		_, ok, err := locker.ForceRelease(canceled, "t1")
		require.ErrorIs(t, err, context.Canceled)
		assert.True(t, strings.HasPrefix(err.Error(), "lock: "), err.Error())
		assert.False(t, ok)
		assert.False(t, degraded(mon))
	})
	for _, cv := range clientVariants {
		t.Run("failover: redis down/"+cv.name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			locker, mon := newForceFailover(t, srv, forceTTL, cv.opts...)
			s := forceSubject{locker: locker}
			held := acquireFor(t, locker, "t1", "plan-1:task-a") // holds the key too
			srv.Kill()

			h, ok, err := locker.ForceRelease(ctx, "t1")
			require.NoError(t, err, "answered from memory")
			require.True(t, ok)
			assert.Equal(t, lease.Holder{Owner: "plan-1:task-a"}, h)
			locktest.WaitLost(t, held, time.Second)
			assert.True(t, degraded(mon))
			s.requireNotHeld(t, "t1")

			_, ok, err = locker.ForceRelease(ctx, "t1")
			require.NoError(t, err)
			assert.False(t, ok)
			next := acquireFor(t, locker, "t1", "plan-2:task-b")
			require.NoError(t, held.Release(ctx))
			s.requireHeldBy(t, "t1", "plan-2:task-b")
			locktest.RequireNotLost(t, next)
		})
	}
}

// TestForceReleaseLeavesNoGoroutines is not parallel: it counts the process's goroutines, so
// it runs while no parallel test does.
func TestForceReleaseLeavesNoGoroutines(t *testing.T) {
	type starter func(t *testing.T) (forceLocker, time.Duration)
	lockers := []struct {
		name  string
		start starter
	}{
		{
			name: "redis",
			start: func(t *testing.T) (forceLocker, time.Duration) {
				const ttl = 600 * time.Millisecond
				return newRedisFixture(t, ttl).locker, ttl
			},
		},
		{
			name: "failover",
			start: func(t *testing.T) (forceLocker, time.Duration) {
				locker, _ := newForceFailover(t, redistest.Start(t), failoverTTL)
				return locker, failoverTTL
			},
		},
	}
	ends := []struct {
		name    string
		release bool
	}{
		{name: "after the loss"},
		{name: "after the loss and release", release: true},
	}
	for _, lk := range lockers {
		for _, end := range ends {
			t.Run(lk.name+"/"+end.name, func(t *testing.T) {
				locker, ttl := lk.start(t)
				requireLeaseLeavesNoGoroutines(t, locker, ttl, func(l lease.Lease) {
					_, ok, err := locker.ForceRelease(context.Background(), "t1")
					require.NoError(t, err)
					require.True(t, ok)
					locktest.WaitLost(t, l, 5*ttl)
					if end.release {
						require.NoError(t, l.Release(context.Background()))
					}
				})
			})
		}
	}
}

// tombstoneKey is the tenant's force-release tombstone under the default prefix, spelled
// out (docs/design.md §5).
func tombstoneKey(tenant string) string { return "executor:lock:released:{" + tenant + "}" }

// stickTTL is the lease TTL of the processes of the cross-process force-release tests: long
// enough that a loaded machine running the race detector lets no refreshed key expire, short
// enough that three TTLs are a short wait.
const stickTTL = time.Second

// newStickFixture starts a private redis-server and a Failover locker (one executor process)
// on it, with leases of stickTTL.
func newStickFixture(t *testing.T, opts ...func(*redis.Options)) *failoverFixture {
	t.Helper()
	srv := redistest.Start(t)
	f := &failoverFixture{srv: srv, raw: srv.Client()}
	require.NoError(t, f.raw.Ping(context.Background()).Err())
	f.locker, f.mon = newForceFailover(t, srv, stickTTL, opts...)
	return f
}

// operators are the lockers an operator's unlock may come from, in a process of its own on
// srv: a Failover locker (the executor's) or a plain Redis one.
var operators = []struct {
	name string
	new  func(t *testing.T, srv *redistest.Server) forceLocker
}{
	{
		name: "failover",
		new: func(t *testing.T, srv *redistest.Server) forceLocker {
			locker, _ := newForceFailover(t, srv, stickTTL)
			return locker
		},
	},
	{
		name: "redis",
		new: func(t *testing.T, srv *redistest.Server) forceLocker {
			client := redis.NewClient(&redis.Options{Addr: srv.Addr()})
			t.Cleanup(func() { _ = client.Close() })
			return lock.NewRedis(client, lock.RedisOptions{TTL: stickTTL, Logger: slog.New(slog.DiscardHandler)})
		},
	},
}

// TestForceReleaseOfAFailoverLeaseOfAnotherProcessSticks: process A holds a tenant through a
// Failover locker; process B (its own client, its own monitor) force-releases it. A's
// watchdog finds its key gone, as after an emptied Redis, but the tombstone B left tells it
// the key was removed on purpose: A's lease is lost for good instead of being taken back.
func TestForceReleaseOfAFailoverLeaseOfAnotherProcessSticks(t *testing.T) {
	t.Parallel()
	for _, op := range operators {
		t.Run(op.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newStickFixture(t) // process A
			b := op.new(t, f.srv)   // process B
			sa := forceSubject{locker: f.locker, raw: f.raw}
			sb := forceSubject{locker: b, raw: f.raw}
			old := f.acquire(t, "t1", "plan-1:task-a")
			val := f.get(t, "t1")
			requireNotLostFor(t, old, stickTTL) // a few refreshes

			h, ok, err := b.ForceRelease(ctx, "t1")
			require.NoError(t, err)
			require.True(t, ok)
			assert.Equal(t, "plan-1:task-a", h.Owner)
			requireRedisTTL(t, h.TTL, stickTTL)
			tomb, err := f.raw.Get(ctx, tombstoneKey("t1")).Result()
			require.NoError(t, err, "the force release leaves a tombstone")
			assert.Equal(t, val, tomb, "holding exactly the value removed")
			pttl, err := f.raw.PTTL(ctx, tombstoneKey("t1")).Result()
			require.NoError(t, err)
			assert.Greater(t, pttl, lock.MinTombstoneTTL-10*time.Second, "TTLs this short give the floor")
			assert.LessOrEqual(t, pttl, lock.MinTombstoneTTL)

			took := locktest.WaitLost(t, old, soon)
			t.Logf("A lost its lease %v after B's force release (TTL %v)", took, stickTTL)
			sa.requireNotHeld(t, "t1") // the in-process lease of A is freed too
			sb.requireNotHeld(t, "t1")

			time.Sleep(3 * stickTTL) // nine watchdog ticks of A: none takes the key back
			requireLostNow(t, old)
			sa.requireNotHeld(t, "t1")
			sb.requireNotHeld(t, "t1")
			assert.False(t, degraded(f.mon), "a force release is no outage")

			next := acquireFor(t, b, "t1", "plan-2:task-b") // the tombstone blocks no one
			sb.requireHeldBy(t, "t1", "plan-2:task-b")
			require.NoError(t, old.Release(ctx), "releasing a force-released lease is not an error")
			require.NoError(t, old.Release(ctx))
			sb.requireHeldBy(t, "t1", "plan-2:task-b") // A's Release leaves B's key alone
			sa.requireHeldBy(t, "t1", "plan-2:task-b")
			requireNotLostFor(t, next, stickTTL)
			sb.requireHeldBy(t, "t1", "plan-2:task-b")

			_, err = f.locker.Acquire(ctx, "t1", "plan-3:task-c")
			require.ErrorIs(t, err, lease.ErrHeld, "B holds the tenant")
			require.NoError(t, next.Release(ctx))
			sa.requireNotHeld(t, "t1")
		})
	}
}

// TestFailoverTakesItsKeyBackUnlessForceReleased: a Failover lease whose key vanished takes
// it back with the same value (a Redis that lost its data) unless a tombstone holds that
// very value; a tombstone of another value, an earlier lease's, changes nothing.
func TestFailoverTakesItsKeyBackUnlessForceReleased(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	requireTakenBack := func(t *testing.T, f *failoverFixture, l lease.Lease, val string) {
		t.Helper()
		f.requireValueSoon(t, "t1", "the same value", func(v string) bool { return v == val })
		requireNotLostFor(t, l, stickTTL)
		assert.Equal(t, val, f.get(t, "t1"), "still ours")
		pttl, err := f.raw.PTTL(ctx, lockKey("t1")).Result()
		require.NoError(t, err)
		assert.Positive(t, pttl)
		assert.LessOrEqual(t, pttl, stickTTL)
		assert.False(t, degraded(f.mon))
	}

	t.Run("Redis emptied by FLUSHALL", func(t *testing.T) {
		t.Parallel()
		f := newStickFixture(t)
		l := f.acquire(t, "t1", "plan-1:task-a")
		val := f.get(t, "t1")
		require.NoError(t, f.raw.FlushAll(ctx).Err())
		requireTakenBack(t, f, l, val)
		n, err := f.raw.Exists(ctx, tombstoneKey("t1")).Result()
		require.NoError(t, err)
		assert.Zero(t, n, "only a force release leaves a tombstone")
		require.NoError(t, l.Release(ctx))
		assert.Empty(t, f.get(t, "t1"))
	})
	t.Run("a tombstone of another value", func(t *testing.T) {
		t.Parallel()
		f := newStickFixture(t)
		l := f.acquire(t, "t1", "plan-1:task-a")
		val := f.get(t, "t1")
		// An earlier lease of the same owner was force-released; this one is not.
		require.NoError(t, f.raw.Set(ctx, tombstoneKey("t1"), otherValue("plan-1:task-a"), time.Minute).Err())
		require.NoError(t, f.raw.Del(ctx, lockKey("t1")).Err())
		requireTakenBack(t, f, l, val)
	})
	t.Run("a later lease after a force release by another process", func(t *testing.T) {
		t.Parallel()
		f := newStickFixture(t)
		b, _ := newForceFailover(t, f.srv, stickTTL)
		old := f.acquire(t, "t1", "plan-1:task-a")
		oldVal := f.get(t, "t1")
		_, ok, err := b.ForceRelease(ctx, "t1")
		require.NoError(t, err)
		require.True(t, ok)
		locktest.WaitLost(t, old, soon)
		require.NoError(t, old.Release(ctx))

		// The same owner takes the tenant again (a retried run): a new token, a new value.
		l := f.acquire(t, "t1", "plan-1:task-a")
		val := f.get(t, "t1")
		require.NotEqual(t, oldVal, val)
		tomb, err := f.raw.Get(ctx, tombstoneKey("t1")).Result()
		require.NoError(t, err)
		require.Equal(t, oldVal, tomb, "the old lease's tombstone is still there")
		require.NoError(t, f.raw.Del(ctx, lockKey("t1")).Err())
		requireTakenBack(t, f, l, val)
		require.NoError(t, l.Release(ctx))
		assert.Empty(t, f.get(t, "t1"))
	})
}

func TestRedisForceReleaseTombstone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name    string
		ttl     time.Duration // the releasing locker's lease TTL
		expiry  time.Duration // the removed key's; 0: none
		wantMin time.Duration // the tombstone's least PTTL
		wantMax time.Duration
	}{
		{name: "short TTLs: the floor", ttl: forceTTL, expiry: forceTTL,
			wantMin: lock.MinTombstoneTTL - 10*time.Second, wantMax: lock.MinTombstoneTTL},
		{name: "key without expiry", ttl: forceTTL,
			wantMin: lock.MinTombstoneTTL - 10*time.Second, wantMax: lock.MinTombstoneTTL},
		{name: "three of the locker's TTLs", ttl: time.Minute, expiry: time.Second,
			wantMin: 3*time.Minute - 10*time.Second, wantMax: 3 * time.Minute},
		{name: "three of the holder's longer TTL", ttl: forceTTL, expiry: 2 * time.Minute,
			wantMin: 6*time.Minute - 10*time.Second, wantMax: 6 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newRedisFixture(t, tt.ttl)
			val := otherValue("plan-9:task-z")
			require.NoError(t, f.raw.Set(ctx, lockKey("t1"), val, tt.expiry).Err())
			_, ok, err := f.locker.ForceRelease(ctx, "t1")
			require.NoError(t, err)
			require.True(t, ok)
			tomb, err := f.raw.Get(ctx, tombstoneKey("t1")).Result()
			require.NoError(t, err)
			assert.Equal(t, val, tomb)
			pttl, err := f.raw.PTTL(ctx, tombstoneKey("t1")).Result()
			require.NoError(t, err)
			assert.GreaterOrEqual(t, pttl, tt.wantMin)
			assert.LessOrEqual(t, pttl, tt.wantMax)

			// Nothing to remove: no tombstone, and the old one is left as it is.
			require.NoError(t, f.raw.Set(ctx, tombstoneKey("t2"), "x", time.Minute).Err())
			_, ok, err = f.locker.ForceRelease(ctx, "t2")
			require.NoError(t, err)
			assert.False(t, ok)
			assert.Equal(t, "x", f.raw.Get(ctx, tombstoneKey("t2")).Val())
			_, ok, err = f.locker.ForceRelease(ctx, "t3")
			require.NoError(t, err)
			assert.False(t, ok)
			n, err := f.raw.Exists(ctx, tombstoneKey("t3")).Result()
			require.NoError(t, err)
			assert.Zero(t, n)

			// The tombstone blocks no new lease.
			l := f.acquire(t, "t1", "plan-2:task-b")
			requireNotLostFor(t, l, forceTTL/2)
			require.NoError(t, l.Release(ctx))
		})
	}
}

// TestForceReleaseFromAnotherProcessLeavesNoGoroutines is not parallel: it counts the
// process's goroutines, so it runs while no parallel test does.
func TestForceReleaseFromAnotherProcessLeavesNoGoroutines(t *testing.T) {
	for _, release := range []bool{false, true} {
		t.Run(fmt.Sprintf("release %v", release), func(t *testing.T) {
			f := newFailoverFixture(t, failFast)
			b, _ := newFailover(t, f.srv, failFast)
			_, _, err := b.Holder(context.Background(), "warm") // B's pool in the baseline
			require.NoError(t, err)
			requireLeaseLeavesNoGoroutines(t, f.locker, failoverTTL, func(l lease.Lease) {
				_, ok, err := b.ForceRelease(context.Background(), "t1")
				require.NoError(t, err)
				require.True(t, ok)
				locktest.WaitLost(t, l, soon)
				if release {
					require.NoError(t, l.Release(context.Background()))
				}
			})
		})
	}
}
