package schedule

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
)

// testRetry is the RetryDelay / ClaimTTL of the contract's schedulers.
const testRetry = 200 * time.Millisecond

// newScheduler returns a scheduler, not started, that is stopped when the test ends.
type newScheduler func(t *testing.T) scheduler

func TestMemoryContract(t *testing.T) {
	t.Parallel()
	runContract(t, func(t *testing.T) scheduler {
		t.Helper()
		m := NewMemory(MemoryOptions{RetryDelay: testRetry, Logger: testLogger(t)})
		t.Cleanup(m.Stop)
		return m
	})
}

func TestRedisContract(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	runContract(t, func(t *testing.T) scheduler {
		t.Helper()
		// A Fallback of an hour: every start in the contract is explained by the timer set
		// for the earliest entry and the pub/sub wake-up, never by the periodic check.
		r := NewRedis(srv.Client(), RedisOptions{
			Prefix: "contract:" + t.Name() + ":", Fallback: time.Hour,
			ClaimTTL: testRetry, Logger: testLogger(t),
		})
		t.Cleanup(r.Stop)
		return r
	})
}

// runContract runs the behaviour both schedulers share.
func runContract(t *testing.T, newSched newScheduler) {
	t.Helper()
	ctx := context.Background()
	// start returns a started scheduler and its recorder.
	start := func(t *testing.T) (scheduler, *recorder) {
		t.Helper()
		s, rec := newSched(t), newRecorder()
		s.Start(rec.due)
		return s, rec
	}

	t.Run("fires once at its time, not before", func(t *testing.T) {
		s, rec := start(t)
		at := time.Now().Add(150 * time.Millisecond)
		require.NoError(t, s.Schedule(ctx, "P1", at))
		got := rec.waitCalls(t, "P1", 1)
		assert.False(t, got[0].Before(at), "called %v before its time", at.Sub(got[0]))
		time.Sleep(300 * time.Millisecond)
		assert.Equal(t, 1, rec.count("P1"), "started once")
	})

	t.Run("several entries fire in time order", func(t *testing.T) {
		s, rec := start(t)
		now := time.Now()
		ats := map[string]time.Time{
			"C": now.Add(900 * time.Millisecond),
			"A": now.Add(300 * time.Millisecond),
			"B": now.Add(600 * time.Millisecond),
		}
		for _, id := range []string{"C", "A", "B"} {
			require.NoError(t, s.Schedule(ctx, id, ats[id]))
		}
		rec.waitCalls(t, "C", 1)
		assert.Equal(t, []string{"A", "B", "C"}, rec.order())
		for id, at := range ats {
			assert.False(t, rec.callsOf(id)[0].Before(at), "%s called before its time", id)
		}
	})

	t.Run("re-scheduling moves the time", func(t *testing.T) {
		s, rec := start(t)
		now := time.Now()
		require.NoError(t, s.Schedule(ctx, "later", now.Add(200*time.Millisecond)))
		require.NoError(t, s.Schedule(ctx, "sooner", now.Add(time.Hour)))
		require.NoError(t, s.Schedule(ctx, "later", now.Add(time.Hour)))
		sooner := now.Add(400 * time.Millisecond)
		require.NoError(t, s.Schedule(ctx, "sooner", sooner))
		got := rec.waitCalls(t, "sooner", 1)
		assert.False(t, got[0].Before(sooner), "called before its new time")
		time.Sleep(200 * time.Millisecond)
		assert.Zero(t, rec.count("later"), "moved an hour later")
	})

	t.Run("unschedule before the time prevents the start", func(t *testing.T) {
		s, rec := start(t)
		now := time.Now()
		require.NoError(t, s.Schedule(ctx, "cancelled", now.Add(200*time.Millisecond)))
		require.NoError(t, s.Schedule(ctx, "marker", now.Add(400*time.Millisecond)))
		removed, err := s.Unschedule(ctx, "cancelled")
		require.NoError(t, err)
		assert.True(t, removed, "the entry was there")
		rec.waitCalls(t, "marker", 1)
		time.Sleep(100 * time.Millisecond)
		assert.Zero(t, rec.count("cancelled"))
	})

	t.Run("unschedule after the start finds nothing", func(t *testing.T) {
		s, rec := start(t)
		require.NoError(t, s.Schedule(ctx, "P1", time.Now()))
		rec.waitCalls(t, "P1", 1)
		settle(t, s)
		removed, err := s.Unschedule(ctx, "P1")
		require.NoError(t, err)
		assert.False(t, removed)
		removed, err = s.Unschedule(ctx, "never scheduled")
		require.NoError(t, err)
		assert.False(t, removed)
	})

	t.Run("a failed start is retried", func(t *testing.T) {
		s, rec := start(t)
		rec.failNext("P1", 2)
		require.NoError(t, s.Schedule(ctx, "P1", time.Now().Add(50*time.Millisecond)))
		got := rec.waitCalls(t, "P1", 3)
		for i := 1; i < len(got); i++ {
			// Half the delay: a call is recorded some time after its claim, and on a busy
			// machine the first one may lag more than the next; an immediate retry is ~0.
			assert.GreaterOrEqual(t, got[i].Sub(got[i-1]), testRetry/2, "retried after the retry delay")
		}
		settle(t, s)
		time.Sleep(2 * testRetry)
		assert.Equal(t, 3, rec.count("P1"), "not started again once it succeeded")
	})

	t.Run("an earlier entry added while waiting fires first", func(t *testing.T) {
		s, rec := start(t)
		require.NoError(t, s.Schedule(ctx, "in an hour", time.Now().Add(time.Hour)))
		time.Sleep(100 * time.Millisecond) // the loop sleeps for the hour
		at := time.Now().Add(100 * time.Millisecond)
		require.NoError(t, s.Schedule(ctx, "soon", at))
		got := rec.waitCalls(t, "soon", 1)
		assert.False(t, got[0].Before(at))
		assert.Zero(t, rec.count("in an hour"))
	})

	t.Run("an empty plan id is refused", func(t *testing.T) {
		s := newSched(t)
		require.Error(t, s.Schedule(ctx, "", time.Now()))
	})
}
