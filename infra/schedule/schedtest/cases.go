package schedtest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testFiresOnce(t *testing.T, newSubject func(t *testing.T) Subject) {
	ctx := context.Background()
	s, rec := start(t, newSubject)
	at := time.Now().Add(150 * time.Millisecond)
	require.NoError(t, s.Scheduler.Schedule(ctx, "P1", at))
	got := rec.WaitCalls(t, "P1", 1)
	assert.False(t, got[0].Before(at), "called %v before its time", at.Sub(got[0]))
	time.Sleep(300 * time.Millisecond)
	assert.Equal(t, 1, rec.Count("P1"), "started once")
}

func testTimeOrder(t *testing.T, newSubject func(t *testing.T) Subject) {
	ctx := context.Background()
	s, rec := start(t, newSubject)
	now := time.Now()
	ats := map[string]time.Time{
		"C": now.Add(900 * time.Millisecond),
		"A": now.Add(300 * time.Millisecond),
		"B": now.Add(600 * time.Millisecond),
	}
	for _, id := range []string{"C", "A", "B"} {
		require.NoError(t, s.Scheduler.Schedule(ctx, id, ats[id]))
	}
	rec.WaitCalls(t, "C", 1)
	assert.Equal(t, []string{"A", "B", "C"}, rec.Order())
	for id, at := range ats {
		assert.False(t, rec.CallsOf(id)[0].Before(at), "%s called before its time", id)
	}
}

func testReschedule(t *testing.T, newSubject func(t *testing.T) Subject) {
	ctx := context.Background()
	s, rec := start(t, newSubject)
	now := time.Now()
	require.NoError(t, s.Scheduler.Schedule(ctx, "later", now.Add(200*time.Millisecond)))
	require.NoError(t, s.Scheduler.Schedule(ctx, "sooner", now.Add(time.Hour)))
	require.NoError(t, s.Scheduler.Schedule(ctx, "later", now.Add(time.Hour)))
	sooner := now.Add(400 * time.Millisecond)
	require.NoError(t, s.Scheduler.Schedule(ctx, "sooner", sooner))
	got := rec.WaitCalls(t, "sooner", 1)
	assert.False(t, got[0].Before(sooner), "called before its new time")
	time.Sleep(200 * time.Millisecond)
	assert.Zero(t, rec.Count("later"), "moved an hour later")
}

func testUnscheduleBefore(t *testing.T, newSubject func(t *testing.T) Subject) {
	ctx := context.Background()
	s, rec := start(t, newSubject)
	now := time.Now()
	require.NoError(t, s.Scheduler.Schedule(ctx, "cancelled", now.Add(200*time.Millisecond)))
	require.NoError(t, s.Scheduler.Schedule(ctx, "marker", now.Add(400*time.Millisecond)))
	removed, err := s.Scheduler.Unschedule(ctx, "cancelled")
	require.NoError(t, err)
	assert.True(t, removed, "the entry was there")
	rec.WaitCalls(t, "marker", 1)
	time.Sleep(100 * time.Millisecond)
	assert.Zero(t, rec.Count("cancelled"))
}

func testUnscheduleAfter(t *testing.T, newSubject func(t *testing.T) Subject) {
	ctx := context.Background()
	s, rec := start(t, newSubject)
	require.NoError(t, s.Scheduler.Schedule(ctx, "P1", time.Now()))
	rec.WaitCalls(t, "P1", 1)
	s.settle(t)
	removed, err := s.Scheduler.Unschedule(ctx, "P1")
	require.NoError(t, err)
	assert.False(t, removed)
	removed, err = s.Scheduler.Unschedule(ctx, "never scheduled")
	require.NoError(t, err)
	assert.False(t, removed)
}

func testRetried(t *testing.T, newSubject func(t *testing.T) Subject) {
	ctx := context.Background()
	s, rec := start(t, newSubject)
	rec.FailNext("P1", 2)
	require.NoError(t, s.Scheduler.Schedule(ctx, "P1", time.Now().Add(50*time.Millisecond)))
	got := rec.WaitCalls(t, "P1", 3)
	for i := 1; i < len(got); i++ {
		// Half the delay: a call is recorded some time after its claim, and on a busy
		// machine the first one may lag more than the next; an immediate retry is ~0.
		assert.GreaterOrEqual(t, got[i].Sub(got[i-1]), RetryDelay/2, "retried after the retry delay")
	}
	s.settle(t)
	time.Sleep(2 * RetryDelay)
	assert.Equal(t, 3, rec.Count("P1"), "not started again once it succeeded")
}

func testEarlierEntry(t *testing.T, newSubject func(t *testing.T) Subject) {
	ctx := context.Background()
	s, rec := start(t, newSubject)
	require.NoError(t, s.Scheduler.Schedule(ctx, "in an hour", time.Now().Add(time.Hour)))
	time.Sleep(100 * time.Millisecond) // the loop sleeps for the hour
	at := time.Now().Add(100 * time.Millisecond)
	require.NoError(t, s.Scheduler.Schedule(ctx, "soon", at))
	got := rec.WaitCalls(t, "soon", 1)
	assert.False(t, got[0].Before(at))
	assert.Zero(t, rec.Count("in an hour"))
}

func testEmptyPlanID(t *testing.T, newSubject func(t *testing.T) Subject) {
	s := newSubject(t)
	require.Error(t, s.Scheduler.Schedule(context.Background(), "", time.Now()))
}
