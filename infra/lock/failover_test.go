package lock_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
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

// failoverTTL is the lease TTL of the failover tests: the watchdog ticks every 100ms.
const failoverTTL = 300 * time.Millisecond

// soon bounds every wait for something the watchdog does "within a few TTLs": generous, so
// that a loaded machine running the race detector does not fail the tests.
const soon = 10 * failoverTTL

// failoverFixture is a private redis-server, a raw client on it for the test's own reads and
// writes, and a Failover locker (one "process") with its own client and outage monitor.
type failoverFixture struct {
	srv    *redistest.Server
	raw    *redis.Client
	locker *lock.Failover
	mon    *outage.Monitor
}

// clientOptions are the options of the clients the fixtures' lockers use.
type clientOptions []func(*redis.Options)

// clientVariants are the clients the outage tests run with: go-redis's defaults retry
// dials and commands, and read for 3s from a frozen server; fail-fast gives up at once.
var clientVariants = []struct {
	name string
	opts clientOptions
}{
	{name: "default client"},
	{name: "fail-fast client", opts: clientOptions{failFast}},
}

// newFailoverFixture starts a private redis-server and a Failover locker on it.
func newFailoverFixture(t *testing.T, opts ...func(*redis.Options)) *failoverFixture {
	t.Helper()
	srv := redistest.Start(t)
	f := &failoverFixture{srv: srv, raw: srv.Client()}
	require.NoError(t, f.raw.Ping(context.Background()).Err())
	f.locker, f.mon = newFailover(t, srv, opts...)
	return f
}

// newFailover returns a Failover locker on srv with a client and a monitor of its own: one
// executor process.
func newFailover(t *testing.T, srv *redistest.Server, opts ...func(*redis.Options)) (*lock.Failover, *outage.Monitor) {
	t.Helper()
	o := &redis.Options{Addr: srv.Addr()}
	for _, opt := range opts {
		opt(o)
	}
	client := redis.NewClient(o)
	t.Cleanup(func() { _ = client.Close() })
	log := slog.New(slog.DiscardHandler)
	mon := outage.NewMonitor(log)
	return lock.NewFailover(client, lock.RedisOptions{Keys: rediskey.New(""), TTL: failoverTTL, Logger: log}, mon), mon
}

// acquire takes tenant's lease for owner and releases it when the test ends.
func (f *failoverFixture) acquire(t *testing.T, tenant, owner string) lease.Lease {
	t.Helper()
	l, err := f.locker.Acquire(context.Background(), tenant, owner)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Release(context.Background()) })
	return l
}

// get returns the tenant's key value, or "" when the key does not exist.
func (f *failoverFixture) get(t *testing.T, tenant string) string {
	t.Helper()
	val, err := f.raw.Get(context.Background(), lockKey(tenant)).Result()
	if errors.Is(err, redis.Nil) {
		return ""
	}
	require.NoError(t, err)
	return val
}

// requireValueSoon waits until the tenant's key holds a value satisfying ok, and returns it.
func (f *failoverFixture) requireValueSoon(t *testing.T, tenant, what string, ok func(string) bool) string {
	t.Helper()
	var val string
	require.Eventually(t, func() bool {
		v, err := f.raw.Get(context.Background(), lockKey(tenant)).Result()
		val = v
		return err == nil && ok(v)
	}, soon, 10*time.Millisecond, "key of %s: want %s, last value %q", tenant, what, val)
	return val
}

// degraded reports whether the monitor says Redis is down.
func degraded(mon *outage.Monitor) bool {
	down, _ := mon.Degraded()
	return down
}

// requireDegradedSoon waits until the monitor says Redis is down.
func requireDegradedSoon(t *testing.T, mon *outage.Monitor) {
	t.Helper()
	require.Eventually(t, func() bool { return degraded(mon) }, soon, 5*time.Millisecond, "monitor not degraded")
}

// requireNotLostFor fails if l is lost within d.
func requireNotLostFor(t *testing.T, l lease.Lease, d time.Duration) {
	t.Helper()
	select {
	case <-l.Lost():
		require.FailNow(t, "lease lost")
	case <-time.After(d):
	}
}

// otherValue is a lease key value of another run: a token that is not ours, then owner.
func otherValue(owner string) string { return strings.Repeat("z", tokenLen) + owner }

func TestFailoverHealthyIsExclusiveAcrossProcesses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFailoverFixture(t)
	other, otherMon := newFailover(t, f.srv) // a second executor process on the same Redis

	l := f.acquire(t, "t1", "plan-1:task-a")
	_, err := other.Acquire(ctx, "t1", "plan-2:task-b")
	require.ErrorIs(t, err, lease.ErrHeld, "held in Redis by the other process")
	assert.Contains(t, err.Error(), "plan-1:task-a", "the error names the holder")
	_, err = f.locker.Acquire(ctx, "t1", "plan-2:task-b")
	require.ErrorIs(t, err, lease.ErrHeld, "held in this process")

	val := f.get(t, "t1")
	assert.Len(t, val, tokenLen+len("plan-1:task-a"))
	assert.True(t, strings.HasSuffix(val, "plan-1:task-a"), "value %q ends with the owner", val)
	pttl, err := f.raw.PTTL(ctx, lockKey("t1")).Result()
	require.NoError(t, err)
	assert.Positive(t, pttl)
	assert.LessOrEqual(t, pttl, failoverTTL)

	for name, locker := range map[string]*lock.Failover{"own": f.locker, "other": other} {
		h, held, err := locker.Holder(ctx, "t1")
		require.NoError(t, err, name)
		require.True(t, held, name)
		assert.Equal(t, "plan-1:task-a", h.Owner, name)
		assert.Positive(t, h.TTL, name, "a Redis answer")
		_, held, err = locker.Holder(ctx, "t2")
		require.NoError(t, err, name)
		assert.False(t, held, name)
	}

	time.Sleep(2 * failoverTTL)
	locktest.RequireNotLost(t, l)
	assert.Equal(t, val, f.get(t, "t1"), "refreshed, never re-taken")

	require.NoError(t, l.Release(ctx))
	assert.Empty(t, f.get(t, "t1"), "release deletes the key")
	next, err := other.Acquire(ctx, "t1", "plan-2:task-b")
	require.NoError(t, err, "the other process's failed Acquire freed its in-process lease")
	require.NoError(t, next.Release(ctx))
	again := f.acquire(t, "t1", "plan-3:task-c")
	locktest.RequireNotLost(t, again)
	assert.False(t, degraded(f.mon))
	assert.False(t, degraded(otherMon))
}

func TestFailoverOutageDuringAHeldLease(t *testing.T) {
	t.Parallel()
	for _, cv := range clientVariants {
		t.Run(cv.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFailoverFixture(t, cv.opts...)
			l := f.acquire(t, "t1", "plan-1:task-a")
			val := f.get(t, "t1")

			f.srv.Kill()
			requireDegradedSoon(t, f.mon)
			requireNotLostFor(t, l, 3*failoverTTL)

			_, err := f.locker.Acquire(ctx, "t1", "plan-2:task-b")
			require.ErrorIs(t, err, lease.ErrHeld, "the in-process lease still holds the tenant")
			h, held, err := f.locker.Holder(ctx, "t1")
			require.NoError(t, err, "answered from memory")
			require.True(t, held)
			assert.Equal(t, "plan-1:task-a", h.Owner)

			f.srv.Restart() // empty: the key is gone
			f.requireValueSoon(t, "t1", "the same value", func(v string) bool { return v == val })
			requireNotLostFor(t, l, failoverTTL)
			assert.Equal(t, val, f.get(t, "t1"), "still ours")
			assert.True(t, degraded(f.mon), "recovering the monitor is the store's business")

			require.NoError(t, l.Release(ctx))
			assert.Empty(t, f.get(t, "t1"))
		})
	}
}

func TestFailoverTakeoverAfterOutage(t *testing.T) {
	t.Parallel()
	for _, cv := range clientVariants {
		t.Run(cv.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFailoverFixture(t, cv.opts...)
			l := f.acquire(t, "t1", "plan-1:task-a")

			f.srv.Kill()
			requireDegradedSoon(t, f.mon)
			f.srv.Restart()
			// Another executor took the tenant as soon as Redis came back.
			taken := otherValue("plan-9:task-z")
			require.NoError(t, f.raw.Set(ctx, lockKey("t1"), taken, time.Minute).Err())

			took := locktest.WaitLost(t, l, soon)
			t.Logf("lost %v after the takeover (TTL %v)", took, failoverTTL)
			require.NoError(t, l.Release(ctx))
			require.NoError(t, l.Release(ctx))
			assert.Equal(t, taken, f.get(t, "t1"), "the lost lease's Release leaves the new holder's key alone")

			f.mon.Recover()
			_, err := f.locker.Acquire(ctx, "t1", "plan-2:task-b")
			require.ErrorIs(t, err, lease.ErrHeld)
			assert.Contains(t, err.Error(), "plan-9:task-z")
			h, held, err := f.locker.Holder(ctx, "t1")
			require.NoError(t, err)
			require.True(t, held)
			assert.Equal(t, "plan-9:task-z", h.Owner)
		})
	}
}

// A lease whose key Redis lost (flushed: no outage seen) is taken back only while the tenant
// has not moved on: when a new task claimed the tenant meanwhile (its active marker names
// another task), that task's run must have the tenant, and this lease is lost.
func TestFailoverTakesBackOnlyWhileTheTenantHasNotMovedOn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		marker string // the tenant's active marker after the flush ("": none)
		lost   bool
	}{
		{name: "no marker: taken back", marker: ""},
		{name: "the marker names the lease's task: taken back", marker: "task-a"},
		{name: "the marker names another task: lost", marker: "task-z", lost: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFailoverFixture(t)
			l := f.acquire(t, "t1", "plan-1:task-a@executor-1")
			val := f.get(t, "t1")

			require.NoError(t, f.raw.FlushAll(ctx).Err())
			if tc.marker != "" {
				require.NoError(t, f.raw.Set(ctx, rediskey.New("").TenantActive("t1"), tc.marker, 0).Err())
			}
			if tc.lost {
				took := locktest.WaitLost(t, l, soon)
				t.Logf("lost %v after the flush (TTL %v)", took, failoverTTL)
				assert.Empty(t, f.get(t, "t1"), "the key is left to the tenant's new task")
			} else {
				f.requireValueSoon(t, "t1", "the same value", func(v string) bool { return v == val })
				requireNotLostFor(t, l, failoverTTL)
			}
			require.NoError(t, l.Release(ctx))
		})
	}
}

func TestFailoverAcquireWhileRedisIsDown(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// back runs once Redis answers again: it returns the owner the key should end with
		// and whether the lease should be lost.
		back func(t *testing.T, f *failoverFixture) (wantOwner string, wantLost bool)
	}{
		{
			name: "the key is re-taken",
			back: func(*testing.T, *failoverFixture) (string, bool) { return "plan-1:task-a", false },
		},
		{
			name: "another process took the tenant first",
			back: func(t *testing.T, f *failoverFixture) (string, bool) {
				require.NoError(t, f.raw.Set(context.Background(), lockKey("t1"), otherValue("plan-9:task-z"), time.Minute).Err())
				return "plan-9:task-z", true
			},
		},
	}
	for _, tt := range tests {
		for _, cv := range clientVariants {
			t.Run(tt.name+"/"+cv.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				f := newFailoverFixture(t, cv.opts...)
				f.srv.Kill()

				l := f.acquire(t, "t1", "plan-1:task-a")
				assert.True(t, degraded(f.mon), "the failed Acquire reported the outage")
				_, err := f.locker.Acquire(ctx, "t1", "plan-2:task-b")
				require.ErrorIs(t, err, lease.ErrHeld)
				requireNotLostFor(t, l, failoverTTL)

				f.srv.Restart()
				wantOwner, wantLost := tt.back(t, f)
				if wantLost {
					took := locktest.WaitLost(t, l, soon)
					t.Logf("lost %v after Redis came back held by another owner", took)
					assert.Equal(t, otherValue(wantOwner), f.get(t, "t1"))
					require.NoError(t, l.Release(ctx))
					assert.Equal(t, otherValue(wantOwner), f.get(t, "t1"), "Release leaves the other key alone")
					return
				}
				val := f.requireValueSoon(t, "t1", "the owner", func(v string) bool { return strings.HasSuffix(v, wantOwner) })
				assert.Len(t, val, tokenLen+len(wantOwner))
				requireNotLostFor(t, l, failoverTTL)
				assert.Equal(t, val, f.get(t, "t1"), "refreshed, not re-taken again")

				f.mon.Recover()
				h, held, err := f.locker.Holder(ctx, "t1")
				require.NoError(t, err)
				require.True(t, held)
				assert.Equal(t, wantOwner, h.Owner)
				assert.Positive(t, h.TTL, "a Redis answer")
				require.NoError(t, l.Release(ctx))
				assert.Empty(t, f.get(t, "t1"))
			})
		}
	}
}

func TestFailoverWhileTheMonitorSaysDegraded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		existing string        // the key's value before Acquire; "" for none
		px       time.Duration // its expiry; 0 for none
		keepUp   bool          // someone keeps refreshing the existing key
		wantLost bool
	}{
		{name: "free tenant: taken in Redis at the next tick"},
		{name: "held by another owner", existing: otherValue("plan-9:task-z"), px: time.Minute, wantLost: true},
		{name: "stale key of the same owner: waited for", existing: otherValue("plan-1:task-a"), px: failoverTTL},
		{name: "same owner kept alive", existing: otherValue("plan-1:task-a"), px: failoverTTL, keepUp: true, wantLost: true},
		{name: "same owner without expiry", existing: otherValue("plan-1:task-a"), wantLost: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			defer func() { cancel(); wg.Wait() }()
			f := newFailoverFixture(t)
			if tt.existing != "" {
				require.NoError(t, f.raw.Set(ctx, lockKey("t1"), tt.existing, tt.px).Err())
			}
			if tt.keepUp {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for ctx.Err() == nil {
						_ = f.raw.PExpire(ctx, lockKey("t1"), failoverTTL).Err()
						time.Sleep(failoverTTL / 6)
					}
				}()
			}
			f.mon.Fail(io.EOF) // the store saw an outage and has not recovered yet

			l := f.acquire(t, "t1", "plan-1:task-a")
			h, held, err := f.locker.Holder(ctx, "t1")
			require.NoError(t, err)
			require.True(t, held, "answered from memory while degraded")
			assert.Equal(t, lease.Holder{Owner: "plan-1:task-a"}, h)

			if tt.wantLost {
				took := locktest.WaitLost(t, l, soon)
				t.Logf("lost %v after Acquire", took)
				require.NoError(t, l.Release(ctx))
				assert.Equal(t, tt.existing, f.get(t, "t1"), "Release leaves the other key alone")
				return
			}
			val := f.requireValueSoon(t, "t1", "ours", func(v string) bool {
				return v != tt.existing && strings.HasSuffix(v, "plan-1:task-a")
			})
			requireNotLostFor(t, l, failoverTTL)
			assert.Equal(t, val, f.get(t, "t1"))
			require.NoError(t, l.Release(ctx))
			assert.Empty(t, f.get(t, "t1"))
		})
	}
}

func TestFailoverLeaseSurvivesAFrozenRedis(t *testing.T) {
	t.Parallel()
	for _, cv := range clientVariants {
		t.Run(cv.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFailoverFixture(t, cv.opts...)
			l := f.acquire(t, "t1", "plan-1:task-a")
			val := f.get(t, "t1")

			f.srv.Freeze()
			thawed := false
			defer func() {
				if !thawed {
					f.srv.Thaw()
				}
			}()
			requireDegradedSoon(t, f.mon)
			requireNotLostFor(t, l, 3*failoverTTL)
			f.srv.Thaw()
			thawed = true

			// Frozen longer than the TTL, the key expired: the refresh re-takes it with the
			// same value.
			f.requireValueSoon(t, "t1", "the same value", func(v string) bool { return v == val })
			requireNotLostFor(t, l, 2*failoverTTL)
			assert.Equal(t, val, f.get(t, "t1"), "kept alive by refreshes")
			pttl, err := f.raw.PTTL(ctx, lockKey("t1")).Result()
			require.NoError(t, err)
			assert.Positive(t, pttl)
			require.NoError(t, l.Release(ctx))
			assert.Empty(t, f.get(t, "t1"))
		})
	}
}

func TestFailoverRelease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("deletes the key and frees the tenant", func(t *testing.T) {
		t.Parallel()
		f := newFailoverFixture(t)
		other, _ := newFailover(t, f.srv)
		l := f.acquire(t, "t1", "p:a")
		require.NoError(t, l.Release(ctx))
		require.NoError(t, l.Release(ctx), "releasing twice is harmless")
		locktest.RequireNotLost(t, l)
		assert.Empty(t, f.get(t, "t1"))
		_, held, err := f.locker.Holder(ctx, "t1")
		require.NoError(t, err)
		assert.False(t, held)
		again := f.acquire(t, "t1", "p:b")
		require.NoError(t, again.Release(ctx))
		fromOther, err := other.Acquire(ctx, "t1", "p:c")
		require.NoError(t, err)
		require.NoError(t, fromOther.Release(ctx))
	})
	for _, cv := range clientVariants {
		t.Run("while Redis is down/"+cv.name, func(t *testing.T) {
			t.Parallel()
			f := newFailoverFixture(t, cv.opts...)
			held := f.acquire(t, "t1", "p:a")
			degradedLease := f.acquire(t, "t2", "p:b")
			f.srv.Kill()
			require.NoError(t, held.Release(ctx), "the key expires by itself")
			require.NoError(t, degradedLease.Release(ctx))
			again := f.acquire(t, "t1", "p:c")
			locktest.RequireNotLost(t, again)
			require.NoError(t, again.Release(ctx))
		})
	}
	t.Run("racing loss", func(t *testing.T) {
		t.Parallel()
		f := newFailoverFixture(t)
		for i := range 10 {
			tenant := fmt.Sprintf("race-%d", i)
			l := f.acquire(t, tenant, "p:a")
			require.NoError(t, f.raw.Set(ctx, lockKey(tenant), otherValue("p:z"), time.Minute).Err())
			time.Sleep(time.Duration(i%5) * failoverTTL / 8)
			require.NoError(t, l.Release(ctx))
			require.NoError(t, l.Release(ctx))
			assert.Equal(t, otherValue("p:z"), f.get(t, tenant))
		}
	})
	t.Run("gives up at the caller's deadline while Redis is frozen", func(t *testing.T) {
		t.Parallel()
		f := newFailoverFixture(t) // the default client reads a frozen server for 3s
		l := f.acquire(t, "t1", "p:a")
		f.srv.Freeze()
		requireDegradedSoon(t, f.mon) // a refresh is stuck
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		err := l.Release(short)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		f.srv.Thaw()
		// The watchdog finishes the release once its refresh returns.
		require.Eventually(t, func() bool {
			again, err := f.locker.Acquire(ctx, "t1", "p:b")
			if err != nil {
				return false
			}
			require.NoError(t, again.Release(ctx))
			return true
		}, 10*time.Second, 20*time.Millisecond)
		require.NoError(t, l.Release(ctx))
	})
}

func TestFailoverErrorsAreWrapped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFailoverFixture(t, failFast)
	f.srv.Kill()

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err := f.locker.Acquire(canceled, "t1", "p:t")
	require.ErrorIs(t, err, context.Canceled)
	assert.True(t, strings.HasPrefix(err.Error(), "lock: "), err.Error())
	assert.False(t, degraded(f.mon), "the caller's cancellation is no outage")

	_, held, err := f.locker.Holder(ctx, "t1")
	require.NoError(t, err, "answered from memory")
	assert.False(t, held)
	assert.True(t, degraded(f.mon))
}

// TestFailoverLeaseLeavesNoGoroutines is not parallel: it counts the process's goroutines, so
// it runs while no parallel test does.
func TestFailoverLeaseLeavesNoGoroutines(t *testing.T) {
	tests := []struct {
		name string
		end  func(t *testing.T, f *failoverFixture, l lease.Lease)
	}{
		{
			name: "after release",
			end: func(t *testing.T, _ *failoverFixture, l lease.Lease) {
				require.NoError(t, l.Release(context.Background()))
			},
		},
		{
			name: "after release while Redis is down",
			end: func(t *testing.T, f *failoverFixture, l lease.Lease) {
				f.srv.Kill()
				requireDegradedSoon(t, f.mon)
				require.NoError(t, l.Release(context.Background()))
			},
		},
		{
			name: "after loss",
			end: func(t *testing.T, f *failoverFixture, l lease.Lease) {
				require.NoError(t, f.raw.Set(context.Background(), lockKey("t1"), otherValue("p:z"), time.Minute).Err())
				locktest.WaitLost(t, l, soon)
			},
		},
		{
			name: "after loss and release",
			end: func(t *testing.T, f *failoverFixture, l lease.Lease) {
				require.NoError(t, f.raw.Set(context.Background(), lockKey("t1"), otherValue("p:z"), time.Minute).Err())
				locktest.WaitLost(t, l, soon)
				require.NoError(t, l.Release(context.Background()))
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFailoverFixture(t, failFast)
			requireLeaseLeavesNoGoroutines(t, f.locker, failoverTTL, func(l lease.Lease) { tt.end(t, f, l) })
		})
	}
}

// Redis out of memory (maxmemory reached, noeviction) refuses the lease's SET with OOM, and
// a holder read (GET and PTTL in a MULTI) with EXECABORT: both are outages. The acquisition
// takes the lease on memory instead of failing the run, the holder is answered from memory,
// and once memory is freed the watchdog takes the key in Redis.
func TestFailoverOnARedisOutOfMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := redistest.Start(t, redistest.Args("--maxmemory-policy", "noeviction"))
	f := &failoverFixture{srv: srv, raw: srv.Client()}
	f.locker, f.mon = newFailover(t, srv, failFast)
	require.NoError(t, f.raw.ConfigSet(ctx, "maxmemory", "1").Err())

	l := f.acquire(t, "t1", "plan-1:task-a") // an OOM does not fail the acquisition
	require.True(t, degraded(f.mon), "the OOM was reported as an outage")
	assert.Contains(t, f.mon.Reason(), "OOM")
	_, err := f.locker.Acquire(ctx, "t1", "plan-2:task-b")
	require.ErrorIs(t, err, lease.ErrHeld, "the lease on memory holds the tenant")

	// Another process, healthy so far, reads the holder: its MULTI is discarded.
	other, otherMon := newFailover(t, srv, failFast)
	h, held, err := other.Holder(ctx, "t1")
	require.NoError(t, err, "an EXECABORT is answered from memory, not returned")
	assert.False(t, held, "the other process holds nothing itself")
	assert.Equal(t, lease.Holder{}, h)
	require.True(t, degraded(otherMon))
	assert.Contains(t, otherMon.Reason(), "EXECABORT")
	assert.Contains(t, otherMon.Reason(), "OOM", "the reason names why the transaction was discarded")

	assert.Empty(t, f.get(t, "t1"), "nothing was written while Redis was full")
	require.NoError(t, f.raw.ConfigSet(ctx, "maxmemory", "0").Err())
	val := f.requireValueSoon(t, "t1", "the owner", func(v string) bool { return strings.HasSuffix(v, "plan-1:task-a") })
	assert.Len(t, val, tokenLen+len("plan-1:task-a"))
	requireNotLostFor(t, l, failoverTTL)
}
