package schedule

import (
	"context"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/infra/schedule/schedtest"
)

// newRedis returns a Redis scheduler on client under prefix, not started, stopped when the
// test ends.
func newRedis(t *testing.T, client redis.UniversalClient, opts RedisOptions) *Redis {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	r := NewRedis(client, opts)
	t.Cleanup(func() { stop(t, r) })
	return r
}

func TestRedisTwoInstancesStartEachEntryOnce(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	const n = 200

	var mu sync.Mutex
	counts := map[string]int{}
	byInstance := [2]int{}
	dueOn := func(instance int) Due {
		return func(_ context.Context, planID string) error {
			mu.Lock()
			defer mu.Unlock()
			counts[planID]++
			byInstance[instance]++
			return nil
		}
	}
	opts := RedisOptions{Prefix: "two:", Logger: testLogger(t)}
	a := newRedis(t, srv.Client(), opts)
	b := newRedis(t, srv.Client(), opts)
	startWith(t, a, dueOn(0))
	startWith(t, b, dueOn(1))

	rng := rand.New(rand.NewSource(1))
	start := time.Now()
	for i := range n {
		via := a
		if i%2 == 1 {
			via = b
		}
		at := start.Add(time.Duration(rng.Int63n(int64(1500 * time.Millisecond))))
		require.NoError(t, via.Schedule(ctx, fmt.Sprintf("P%03d", i), at))
	}
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(counts) == n
	}, schedtest.WaitFor, schedtest.Tick, "every entry started")
	settle(t, a)
	settle(t, b)
	left, err := srv.Client().ZCard(ctx, rediskey.New("two:").Schedule()).Result()
	require.NoError(t, err)
	assert.Zero(t, left, "every entry acknowledged")

	mu.Lock()
	defer mu.Unlock()
	for i := range n {
		id := fmt.Sprintf("P%03d", i)
		assert.Equal(t, 1, counts[id], "%s started exactly once", id)
	}
	t.Logf("claimed: %d by the first instance, %d by the second", byInstance[0], byInstance[1])
}

func TestRedisWakeFromAnotherInstance(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	opts := RedisOptions{Prefix: "wake:", Fallback: time.Hour}
	idle := newRedis(t, srv.Client(), opts) // never started
	running := newRedis(t, srv.Client(), opts)
	rec := schedtest.NewRecorder()
	startWith(t, running, rec.Due)

	require.NoError(t, running.Schedule(ctx, "in an hour", time.Now().Add(time.Hour)))
	time.Sleep(100 * time.Millisecond) // the loop sleeps for the hour
	at := time.Now().Add(200 * time.Millisecond)
	require.NoError(t, idle.Schedule(ctx, "P1", at))
	got := rec.WaitCalls(t, "P1", 1)
	assert.False(t, got[0].Before(at))
}

func TestRedisFallbackFindsEntriesWithoutWake(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	s := newRedis(t, srv.Client(), RedisOptions{Prefix: "fallback:", Fallback: 200 * time.Millisecond})
	rec := schedtest.NewRecorder()
	startWith(t, s, rec.Due)

	time.Sleep(50 * time.Millisecond) // the loop's first pass found nothing
	at := time.Now().Add(100 * time.Millisecond)
	// Written directly: no wake message.
	require.NoError(t, srv.Client().ZAdd(ctx, rediskey.New("fallback:").Schedule(),
		redis.Z{Score: float64(millis(at)), Member: "P1"}).Err())
	got := rec.WaitCalls(t, "P1", 1)
	assert.False(t, got[0].Before(at))
}

func TestRedisUnacknowledgedClaimIsStartedAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const claimTTL = 400 * time.Millisecond

	tests := []struct {
		name string
		// crash claims P1 on a first instance that never acknowledges it, and returns the
		// claim's expiry.
		crash func(t *testing.T, srv *redistest.Server, opts RedisOptions) time.Time
	}{
		{"claim script run directly", func(t *testing.T, srv *redistest.Server, opts RedisOptions) time.Time {
			t.Helper()
			first := newRedis(t, srv.Client(), opts)
			at := time.Now()
			require.NoError(t, first.Schedule(ctx, "P1", at))
			// Due from the next millisecond: a schedule rounds up to one, a claim's now down.
			ids, until, err := first.claim(ctx, at.Add(time.Millisecond))
			require.NoError(t, err)
			require.Equal(t, []string{"P1"}, ids)
			score, err := srv.Client().ZScore(ctx, first.keys.Schedule(), "P1").Result()
			require.NoError(t, err)
			require.Equal(t, float64(until), score, "claimed until the claim TTL")
			return time.UnixMilli(until)
		}},
		{"instance whose Due failed, then stopped", func(t *testing.T, srv *redistest.Server, opts RedisOptions) time.Time {
			t.Helper()
			first := newRedis(t, srv.Client(), opts)
			rec := schedtest.NewRecorder()
			rec.FailNext("P1", 1)
			startWith(t, first, rec.Due)
			// The claim comes after this instant: its expiry is at least claimTTL later (less a
			// millisecond of rounding). The Due call's own time is no bound: on a busy machine it
			// may come well after the claim.
			scheduled := time.Now()
			require.NoError(t, first.Schedule(ctx, "P1", scheduled))
			rec.WaitCalls(t, "P1", 1)
			stop(t, first)
			require.Equal(t, 1, rec.Count("P1"))
			return scheduled.Add(claimTTL - time.Millisecond)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			opts := RedisOptions{Prefix: "crash:", Fallback: time.Hour, ClaimTTL: claimTTL}
			expiry := tc.crash(t, srv, opts)

			second := newRedis(t, srv.Client(), opts)
			rec := schedtest.NewRecorder()
			startWith(t, second, rec.Due)
			got := rec.WaitCalls(t, "P1", 1)
			assert.False(t, got[0].Before(expiry), "claimed again only after the claim expired")
			settle(t, second)
			n, err := srv.Client().ZCard(ctx, second.keys.Schedule()).Result()
			require.NoError(t, err)
			assert.Zero(t, n, "acknowledged")
		})
	}
}

func TestRedisOutage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("schedule while Redis is down", func(t *testing.T) {
		t.Parallel()
		srv := redistest.Start(t)
		s := newRedis(t, srv.Client(), RedisOptions{Prefix: "outage:", Fallback: time.Hour})
		rec := schedtest.NewRecorder()
		startWith(t, s, rec.Due)

		srv.Stop()
		at := time.Now().Add(200 * time.Millisecond)
		require.NoError(t, s.Schedule(ctx, "P1", at), "an outage does not fail the caller")
		require.NoError(t, s.Schedule(ctx, "cancelled", at))
		removed, err := s.Unschedule(ctx, "cancelled")
		require.NoError(t, err)
		assert.True(t, removed, "the entry kept in memory is removed")
		require.Equal(t, 2, s.pendingCount(), "kept in memory: a schedule and a removal")
		time.Sleep(300 * time.Millisecond)
		assert.Zero(t, rec.Count("P1"), "no start without Redis")

		srv.Restart()
		got := rec.WaitCalls(t, "P1", 1)
		assert.False(t, got[0].Before(at))
		settle(t, s)
		assert.Zero(t, s.pendingCount())
		assert.Zero(t, rec.Count("cancelled"))
		n, err := srv.Client().ZCard(ctx, s.keys.Schedule()).Result()
		require.NoError(t, err)
		assert.Zero(t, n)
	})

	t.Run("start while Redis is down", func(t *testing.T) {
		t.Parallel()
		srv := redistest.Start(t)
		s := newRedis(t, srv.Client(), RedisOptions{Prefix: "outage:", Fallback: time.Hour})
		rec := schedtest.NewRecorder()
		srv.Stop()
		startWith(t, s, rec.Due) // returns after about 2 s, still trying
		require.NoError(t, s.Schedule(ctx, "P1", time.Now()))

		srv.Restart()
		rec.WaitCalls(t, "P1", 1)
		// The subscription came back too: a wake from another instance is heard.
		at := time.Now().Add(200 * time.Millisecond)
		require.Eventually(t, func() bool {
			n, err := srv.Client().PubSubNumSub(ctx, s.keys.ScheduleWake()).Result()
			return err == nil && n[s.keys.ScheduleWake()] == 1
		}, schedtest.WaitFor, schedtest.Tick, "re-subscribed")
		other := newRedis(t, srv.Client(), RedisOptions{Prefix: "outage:"})
		require.NoError(t, other.Schedule(ctx, "P2", at))
		got := rec.WaitCalls(t, "P2", 1)
		assert.False(t, got[0].Before(at))
	})

	t.Run("unschedule while Redis is down fails for an entry in Redis", func(t *testing.T) {
		t.Parallel()
		srv := redistest.Start(t)
		s := newRedis(t, srv.Client(), RedisOptions{Prefix: "outage:"})
		require.NoError(t, s.Schedule(ctx, "P1", time.Now().Add(time.Hour)))
		srv.Stop()
		_, err := s.Unschedule(ctx, "P1")
		require.ErrorContains(t, err, "schedule: unschedule P1")
	})
}

func TestRedisEntriesOutliveTheirInstance(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	opts := RedisOptions{Prefix: "restart:", Fallback: time.Hour}

	first := newRedis(t, srv.Client(), opts)
	firstRec := schedtest.NewRecorder()
	startWith(t, first, firstRec.Due)
	now := time.Now()
	require.NoError(t, first.Schedule(ctx, "past", now.Add(200*time.Millisecond)))
	require.NoError(t, first.Schedule(ctx, "future", now.Add(600*time.Millisecond)))
	stop(t, first)

	time.Sleep(300 * time.Millisecond) // "past" is due while no instance runs
	second := newRedis(t, srv.Client(), opts)
	rec := schedtest.NewRecorder()
	startWith(t, second, rec.Due)
	rec.WaitCalls(t, "past", 1)
	rec.WaitCalls(t, "future", 1)
	assert.Empty(t, firstRec.Order(), "the stopped instance started nothing")
}
