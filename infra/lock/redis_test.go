package lock_test

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/lease"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/lock/locktest"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redistest"
)

// tokenLen is the length of redislock's random token, stored before the owner.
const tokenLen = 22

// redisFixture is a private redis-server, a raw client on it, and a locker using that client.
type redisFixture struct {
	srv    *redistest.Server
	raw    *redis.Client
	locker *lock.Redis
	ttl    time.Duration
}

// newRedisFixture starts a private redis-server and a locker on it with the given TTL and
// the default key prefix. The client has go-redis's default options unless opts change them.
func newRedisFixture(t *testing.T, ttl time.Duration, opts ...func(*redis.Options)) *redisFixture {
	t.Helper()
	srv := redistest.Start(t)
	o := &redis.Options{Addr: srv.Addr()}
	for _, opt := range opts {
		opt(o)
	}
	raw := redis.NewClient(o)
	t.Cleanup(func() { _ = raw.Close() })
	require.NoError(t, raw.Ping(context.Background()).Err())
	locker := lock.NewRedis(raw, lock.RedisOptions{
		Keys:   rediskey.New(""),
		TTL:    ttl,
		Logger: slog.New(slog.DiscardHandler),
	})
	return &redisFixture{srv: srv, raw: raw, locker: locker, ttl: ttl}
}

// failFast makes the client give up at the first refused connection instead of retrying
// dials and commands for seconds, to keep outage tests short.
func failFast(o *redis.Options) {
	o.MaxRetries = -1
	o.DialerRetries = 1
}

// acquire takes tenant's lease for owner and releases it when the test ends.
func (f *redisFixture) acquire(t *testing.T, tenant, owner string) lease.Lease {
	t.Helper()
	l, err := f.locker.Acquire(context.Background(), tenant, owner)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Release(context.Background()) })
	return l
}

// lockKey is the tenant's lease key under the default prefix, spelled out (docs/design.md §5).
func lockKey(tenant string) string { return "executor:lock:tenant:{" + tenant + "}" }

func TestRedisLeaseIsExclusivePerTenant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const ttl = 5 * time.Second
	f := newRedisFixture(t, ttl)

	l := f.acquire(t, "t1", "plan-1:task-a")
	_, err := f.locker.Acquire(ctx, "t1", "plan-2:task-b")
	require.ErrorIs(t, err, lease.ErrHeld)

	val, err := f.raw.Get(ctx, lockKey("t1")).Result()
	require.NoError(t, err)
	assert.Len(t, val, tokenLen+len("plan-1:task-a"))
	assert.True(t, strings.HasSuffix(val, "plan-1:task-a"), "value %q ends with the owner", val)
	pttl, err := f.raw.PTTL(ctx, lockKey("t1")).Result()
	require.NoError(t, err)
	assert.Positive(t, pttl)
	assert.LessOrEqual(t, pttl, ttl)

	other := f.acquire(t, "t2", "plan-1:task-c")
	locktest.RequireNotLost(t, other)

	require.NoError(t, l.Release(ctx))
	n, err := f.raw.Exists(ctx, lockKey("t1")).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "release deletes the key")
	n, err = f.raw.Exists(ctx, lockKey("t2")).Result()
	require.NoError(t, err)
	assert.EqualValues(t, 1, n, "other tenants are untouched")

	again := f.acquire(t, "t1", "plan-2:task-b")
	h, held, err := f.locker.Holder(ctx, "t1")
	require.NoError(t, err)
	require.True(t, held)
	assert.Equal(t, "plan-2:task-b", h.Owner)
	require.NoError(t, again.Release(ctx))
}

func TestRedisUsesTheKeysPrefix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		keys    rediskey.Keys
		wantKey string
	}{
		{name: "zero keys use the default prefix", keys: rediskey.Keys{}, wantKey: "executor:lock:tenant:{t1}"},
		{name: "default prefix", keys: rediskey.New(""), wantKey: "executor:lock:tenant:{t1}"},
		{name: "custom prefix", keys: rediskey.New("staging:"), wantKey: "staging:lock:tenant:{t1}"},
	}
	srv := redistest.Start(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			raw := redis.NewClient(&redis.Options{Addr: srv.Addr(), DB: i})
			t.Cleanup(func() { _ = raw.Close() })
			locker := lock.NewRedis(raw, lock.RedisOptions{Keys: tt.keys, Logger: slog.New(slog.DiscardHandler)})
			l, err := locker.Acquire(ctx, "t1", "p:t")
			require.NoError(t, err)
			defer func() { require.NoError(t, l.Release(ctx)) }()
			keys, err := raw.Keys(ctx, "*").Result()
			require.NoError(t, err)
			assert.Equal(t, []string{tt.wantKey}, keys)
		})
	}
}

func TestNewRedisTTL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ttl  time.Duration
		want time.Duration
	}{
		{name: "zero means the default", ttl: 0, want: lock.DefaultRedisTTL},
		{name: "negative means the default", ttl: -time.Second, want: lock.DefaultRedisTTL},
		{name: "tiny is raised to the minimum", ttl: time.Microsecond, want: lock.MinRedisTTL},
		{name: "kept", ttl: 2 * time.Second, want: 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
			t.Cleanup(func() { _ = client.Close() })
			r := lock.NewRedis(client, lock.RedisOptions{TTL: tt.ttl})
			assert.Equal(t, tt.want, r.TTL())
		})
	}
	assert.Equal(t, 60*time.Second, lock.DefaultRedisTTL)
}

func TestRedisWatchdogKeepsTheLeasePastItsTTL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const ttl = 300 * time.Millisecond
	f := newRedisFixture(t, ttl)
	l := f.acquire(t, "t1", "plan:task")

	time.Sleep(time.Second)
	locktest.RequireNotLost(t, l)
	val, err := f.raw.Get(ctx, lockKey("t1")).Result()
	require.NoError(t, err, "the key outlives its TTL")
	assert.True(t, strings.HasSuffix(val, "plan:task"))
	pttl, err := f.raw.PTTL(ctx, lockKey("t1")).Result()
	require.NoError(t, err)
	assert.Positive(t, pttl)
	assert.LessOrEqual(t, pttl, ttl)
	require.NoError(t, l.Release(ctx))
}

func TestRedisLeaseLostByTakeover(t *testing.T) {
	t.Parallel()
	const ttl = 300 * time.Millisecond
	takenValue := strings.Repeat("x", tokenLen) + "plan-9:task-z"
	tests := []struct {
		name      string
		takeover  func(ctx context.Context, raw *redis.Client, key string) error
		wantOwner string // owner after the takeover; "" when the key is gone
	}{
		{
			name: "key deleted",
			takeover: func(ctx context.Context, raw *redis.Client, key string) error {
				return raw.Del(ctx, key).Err()
			},
		},
		{
			name: "key set to another token",
			takeover: func(ctx context.Context, raw *redis.Client, key string) error {
				return raw.Set(ctx, key, takenValue, time.Minute).Err()
			},
			wantOwner: "plan-9:task-z",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newRedisFixture(t, ttl)
			l := f.acquire(t, "t1", "plan-1:task-a")

			require.NoError(t, tt.takeover(ctx, f.raw, lockKey("t1")))
			took := locktest.WaitLost(t, l, 2*ttl)
			t.Logf("lost %v after the takeover (TTL %v)", took, ttl)
			require.NoError(t, l.Release(ctx), "releasing a lost lease is not an error")

			if tt.wantOwner == "" {
				next := f.acquire(t, "t1", "plan-2:task-b")
				locktest.RequireNotLost(t, next)
				h, held, err := f.locker.Holder(ctx, "t1")
				require.NoError(t, err)
				require.True(t, held)
				assert.Equal(t, "plan-2:task-b", h.Owner)
				return
			}
			_, err := f.locker.Acquire(ctx, "t1", "plan-2:task-b")
			require.ErrorIs(t, err, lease.ErrHeld)
			val, err := f.raw.Get(ctx, lockKey("t1")).Result()
			require.NoError(t, err)
			assert.Equal(t, takenValue, val, "the stale lease's Release leaves the new holder's key alone")
			h, held, err := f.locker.Holder(ctx, "t1")
			require.NoError(t, err)
			require.True(t, held)
			assert.Equal(t, tt.wantOwner, h.Owner)
		})
	}
}

func TestRedisLeaseLostByOutage(t *testing.T) {
	t.Parallel()
	const ttl = 300 * time.Millisecond
	tests := []struct {
		name string
		opts []func(*redis.Options)
	}{
		// go-redis's defaults retry dials and commands for longer than TTL/3.
		{name: "default client"},
		{name: "fail-fast client", opts: []func(*redis.Options){failFast}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newRedisFixture(t, ttl, tt.opts...)
			l := f.acquire(t, "t1", "plan-1:task-a")

			f.srv.Kill()
			took := locktest.WaitLost(t, l, 3*ttl)
			t.Logf("lost %v after the kill (TTL %v)", took, ttl)
			require.NoError(t, l.Release(ctx), "releasing a lease lost in an outage is not an error")

			_, err := f.locker.Acquire(ctx, "t1", "plan-2:task-b")
			require.Error(t, err, "Redis is down")
			require.NotErrorIs(t, err, lease.ErrHeld)
			require.NotErrorIs(t, err, redis.Nil)

			f.srv.Restart()
			next := f.acquire(t, "t1", "plan-2:task-b")
			locktest.RequireNotLost(t, next)
			require.NoError(t, next.Release(ctx))
		})
	}
}

func TestRedisLeaseLostWhileRedisIsFrozen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const ttl = 300 * time.Millisecond
	f := newRedisFixture(t, ttl)
	l := f.acquire(t, "t1", "plan-1:task-a")

	// The client has no ContextTimeoutEnabled, so a refresh blocks on the frozen server for
	// its read timeout: the lease must be declared lost on time all the same.
	f.srv.Freeze()
	took := locktest.WaitLost(t, l, 3*ttl)
	t.Logf("lost %v after the freeze (TTL %v)", took, ttl)
	f.srv.Thaw()
	require.NoError(t, l.Release(ctx))
}

func TestRedisHolder(t *testing.T) {
	t.Parallel()
	const ttl = 5 * time.Second
	tests := []struct {
		name      string
		setup     func(t *testing.T, f *redisFixture)
		wantHeld  bool
		wantOwner string
		wantTTL   func(t *testing.T, got time.Duration)
	}{
		{
			name: "key without expiry",
			setup: func(t *testing.T, f *redisFixture) {
				require.NoError(t, f.raw.Set(context.Background(), lockKey("t1"), strings.Repeat("x", tokenLen)+"p:t", 0).Err())
			},
			wantHeld:  true,
			wantOwner: "p:t",
			wantTTL:   func(t *testing.T, got time.Duration) { assert.Zero(t, got) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newRedisFixture(t, ttl)
			tt.setup(t, f)
			h, held, err := f.locker.Holder(context.Background(), "t1")
			require.NoError(t, err)
			assert.Equal(t, tt.wantHeld, held)
			if !tt.wantHeld {
				assert.Equal(t, lease.Holder{}, h)
				return
			}
			assert.Equal(t, tt.wantOwner, h.Owner)
			tt.wantTTL(t, h.TTL)
		})
	}
}

func TestRedisErrorsAreWrapped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newRedisFixture(t, 5*time.Second, failFast)
	f.srv.Kill()

	_, err := f.locker.Acquire(ctx, "t1", "p:t")
	require.Error(t, err)
	assert.NotErrorIs(t, err, lease.ErrHeld)
	assert.NotErrorIs(t, err, redis.Nil)

	_, held, err := f.locker.Holder(ctx, "t1")
	require.Error(t, err)
	assert.False(t, held)
	assert.NotErrorIs(t, err, redis.Nil)
}

func TestRedisReleaseFailureCanBeRetried(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newRedisFixture(t, 5*time.Second, failFast)
	l := f.acquire(t, "t1", "p:t")

	f.srv.Kill()
	err := l.Release(ctx)
	require.Error(t, err, "Redis is down and the lease is not lost yet")
	assert.NotErrorIs(t, err, redis.Nil)

	f.srv.Restart() // empty: the key is gone
	require.NoError(t, l.Release(ctx))
	require.NoError(t, l.Release(ctx))
}

func TestRedisReleaseIsIdempotentAndRacesLossSafely(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const ttl = 30 * time.Millisecond
	f := newRedisFixture(t, ttl)

	t.Run("release racing loss", func(t *testing.T) {
		for i := range 20 {
			tenant := fmt.Sprintf("race-%d", i)
			l := f.acquire(t, tenant, "p:t")
			require.NoError(t, f.raw.Del(ctx, lockKey(tenant)).Err())
			time.Sleep(time.Duration(i%5) * ttl / 8)
			require.NoError(t, l.Release(ctx))
			require.NoError(t, l.Release(ctx))
		}
	})
}

// TestRedisLeaseLeavesNoGoroutines is not parallel: it counts the process's goroutines, so
// it runs while no parallel test does.
func TestRedisLeaseLeavesNoGoroutines(t *testing.T) {
	const ttl = 150 * time.Millisecond
	tests := []struct {
		name string
		end  func(t *testing.T, f *redisFixture, l lease.Lease)
	}{
		{
			name: "after release",
			end: func(t *testing.T, _ *redisFixture, l lease.Lease) {
				require.NoError(t, l.Release(context.Background()))
			},
		},
		{
			name: "after loss by takeover",
			end: func(t *testing.T, f *redisFixture, l lease.Lease) {
				require.NoError(t, f.raw.Del(context.Background(), lockKey("t1")).Err())
				locktest.WaitLost(t, l, 3*ttl)
			},
		},
		{
			name: "after loss by outage",
			end: func(t *testing.T, f *redisFixture, l lease.Lease) {
				f.srv.Kill()
				locktest.WaitLost(t, l, 3*ttl)
			},
		},
		{
			name: "after loss and release",
			end: func(t *testing.T, f *redisFixture, l lease.Lease) {
				f.srv.Kill()
				locktest.WaitLost(t, l, 3*ttl)
				require.NoError(t, l.Release(context.Background()))
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newRedisFixture(t, ttl)
			requireLeaseLeavesNoGoroutines(t, f.locker, ttl, func(l lease.Lease) { tt.end(t, f, l) })
		})
	}
}

// requireLeaseLeavesNoGoroutines takes tenant t1's lease on locker, lets its watchdog run for
// settle, ends it with end (release, loss, ...), and requires the process's goroutines back
// to their count before the lease.
func requireLeaseLeavesNoGoroutines(t *testing.T, locker interface {
	Acquire(ctx context.Context, tenantID, owner string) (lease.Lease, error)
}, settle time.Duration, end func(lease.Lease)) {
	t.Helper()
	// Warm the client's pool up so its own goroutines are in the baseline.
	warm, err := locker.Acquire(context.Background(), "warm", "p:t")
	require.NoError(t, err)
	require.NoError(t, warm.Release(context.Background()))
	before := redistest.SettledGoroutines(t)

	l, err := locker.Acquire(context.Background(), "t1", "p:t")
	require.NoError(t, err)
	assert.Greater(t, runtime.NumGoroutine(), before, "the lease runs a watchdog")
	time.Sleep(settle) // let the watchdog refresh a few times
	end(l)

	redistest.RequireGoroutinesBackTo(t, before)
}
