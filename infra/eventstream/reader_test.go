package eventstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/event"
	evs "github.com/executor-dev/executor/events"
	"github.com/executor-dev/executor/infra/eventstream"
	"github.com/executor-dev/executor/infra/redistest"
)

// startReader starts a reader of client's stream, with hub as its local events, stopped when
// the test ends.
func startReader(t *testing.T, client *redis.Client, hub *evs.Hub) *eventstream.Reader {
	t.Helper()
	r := eventstream.NewReader(client, eventstream.ReaderOptions{Local: hub, Block: 200 * time.Millisecond, Logger: quiet()})
	require.NoError(t, r.Start(context.Background()))
	t.Cleanup(func() { requireStopsReader(t, r) })
	return r
}

func requireStopsReader(t *testing.T, r *eventstream.Reader) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, r.Stop(ctx))
}

// xadd appends es to the stream as the sink does, and returns their entry IDs.
func xadd(t *testing.T, client *redis.Client, maxLen int64, es ...event.Event) []string {
	t.Helper()
	ids := make([]string, len(es))
	for i, e := range es {
		data, err := json.Marshal(storedOf(e))
		require.NoError(t, err)
		ids[i], err = client.XAdd(context.Background(), &redis.XAddArgs{
			Stream: "executor:events", MaxLen: maxLen, Approx: true, Values: []any{eventstream.Field, data},
		}).Result()
		require.NoError(t, err)
	}
	return ids
}

// watchOf starts a watch on r, closed when the test ends.
func watchOf(t *testing.T, r *eventstream.Reader, f evs.Filter, last string) *evs.Watch {
	t.Helper()
	w, err := r.Watch(context.Background(), f, last)
	require.NoError(t, err)
	t.Cleanup(w.Close)
	return w
}

// receive returns the next n fresh live entries of w.
func receive(t *testing.T, w *evs.Watch, n int) []evs.Entry {
	t.Helper()
	var out []evs.Entry
	timeout := time.After(10 * time.Second)
	for len(out) < n {
		select {
		case e, open := <-w.Live():
			require.True(t, open, "the watch ended after %d entries", len(out))
			if w.Fresh(e) {
				out = append(out, e)
			}
		case <-timeout:
			require.FailNow(t, "no entry", "after %d of %d", len(out), n)
		}
	}
	return out
}

func entryIDs(es []evs.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

// replayAll reads a watch's whole replay.
func replayAll(t *testing.T, w *evs.Watch) []evs.Entry {
	t.Helper()
	var out []evs.Entry
	for {
		page, err := w.Replay(context.Background())
		require.NoError(t, err)
		if len(page) == 0 {
			return out
		}
		out = append(out, page...)
	}
}

func TestReaderWatches(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := srv.Client()
	old := xadd(t, client, 10_000, events(1200)...) // more than two replay pages
	r := startReader(t, client, evs.NewHub(10))

	tests := []struct {
		name    string
		filter  evs.Filter
		last    string
		replay  []string
		wantGap bool
	}{
		{"without Last-Event-ID: nothing old", evs.Filter{}, "", nil, false},
		{"resumed: every entry after it", evs.Filter{}, old[99], old[100:], false},
		{"resumed after the newest: nothing", evs.Filter{}, old[1199], nil, false},
		{"resumed with a filter", evs.Filter{TenantID: "tenant-1"}, old[0], old[1:2], false},
		{"older than the stream: gap", evs.Filter{}, "1-0", old, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := watchOf(t, r, tc.filter, tc.last)
			got := replayAll(t, w)
			if tc.replay == nil {
				assert.Empty(t, got)
			} else {
				assert.Equal(t, tc.replay, entryIDs(got))
			}
			assert.Equal(t, tc.wantGap, w.Gap)
		})
	}

	t.Run("malformed Last-Event-ID", func(t *testing.T) {
		for _, id := range []string{"yesterday", "12-", "-3", "1-2-", "1-2-3-4"} {
			_, err := r.Watch(context.Background(), evs.Filter{}, id)
			require.ErrorIs(t, err, evs.ErrBadID, id)
		}
	})
}

// A watch resumed while entries keep coming gets each entry once: replayed or live, in order.
// A watcher that falls behind is ended (Overflowed) and resumes from its last ID, as an SSE
// client does; across those resumptions nothing is lost or repeated.
func TestReaderHandsOverFromReplayToLiveWithoutGapOrDuplicate(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := srv.Client()
	first := xadd(t, client, 100_000, events(1)...)[0]
	r := startReader(t, client, evs.NewHub(10))

	writer := srv.Client()
	stop, done := make(chan struct{}), make(chan []string)
	go func() { // writes until told to stop, so that the last watch always has live entries
		var ids []string
		defer func() { done <- ids }()
		for _, e := range events(100_000) {
			select {
			case <-stop:
				return
			default:
			}
			data, _ := json.Marshal(storedOf(e))
			id, err := writer.XAdd(context.Background(), &redis.XAddArgs{Stream: "executor:events", Values: []any{eventstream.Field, data}}).Result()
			if err != nil {
				return
			}
			ids = append(ids, id)
		}
	}()
	require.Eventually(t, func() bool { // some entries are in the stream before the watch
		n, err := client.XLen(context.Background(), "executor:events").Result()
		return err == nil && n > 100
	}, 10*time.Second, time.Millisecond)

	const want = 3000
	var got []string
	replayed, live, resumed := 0, 0, 0
	for last := first; len(got) < want; last = got[len(got)-1] {
		w := watchOf(t, r, evs.Filter{}, last)
		page := entryIDs(replayAll(t, w))
		replayed += len(page)
		got = append(got, page...)
		if open := drainLive(t, w, &got, &live, want); !open {
			require.True(t, w.Overflowed(), "a live watch ends only when its watcher falls behind")
			resumed++
		}
		w.Close()
	}
	close(stop)
	written := <-done
	t.Logf("%d replayed, %d live, %d resumptions", replayed, live, resumed)
	require.GreaterOrEqual(t, replayed, 100, "some entries were replayed")
	require.Positive(t, live, "some entries came live")
	require.GreaterOrEqual(t, len(written), len(got))
	require.Equal(t, written[:len(got)], got)
}

// drainLive appends w's fresh live entries to got (counting them in live) until got holds
// want; it returns false when the watch ended first.
func drainLive(t *testing.T, w *evs.Watch, got *[]string, live *int, want int) bool {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for len(*got) < want {
		select {
		case e, open := <-w.Live():
			if !open {
				return false
			}
			if w.Fresh(e) {
				*got = append(*got, e.ID)
				*live++
			}
		case <-timeout:
			require.FailNow(t, "no entry", "after %d of %d", len(*got), want)
		}
	}
	return true
}

func TestReaderFallsBackToLocalEventsWhileRedisIsAway(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := executorClient(t, srv)
	hub := evs.NewHub(10)
	r := startReader(t, client, hub)
	onStream := watchOf(t, r, evs.Filter{}, "")
	xadd(t, client, 10_000, events(1)...)
	receive(t, onStream, 1)

	srv.Kill()
	select {
	case _, open := <-onStream.Live():
		require.False(t, open, "a watch on the stream ends when Redis goes away")
	case <-time.After(10 * time.Second):
		require.FailNow(t, "the watch on the stream did not end")
	}

	var local *evs.Watch
	require.Eventually(t, func() bool {
		w, err := r.Watch(context.Background(), evs.Filter{}, "1732390000123-0")
		require.NoError(t, err)
		hub.Publish(event.Event{Kind: event.Plan, PlanID: "P1", Status: "RUNNING"})
		select {
		case e, open := <-w.Live():
			if open && e.ID != "" && w.Gap {
				local = w
				return true
			}
		case <-time.After(50 * time.Millisecond):
		}
		w.Close()
		return false
	}, 10*time.Second, 10*time.Millisecond, "while Redis is away a watch gets this executor's events, after a gap")
	t.Cleanup(local.Close)

	srv.Restart()
	select {
	case <-drained(local):
	case <-time.After(15 * time.Second):
		require.FailNow(t, "the watch on local events did not end once Redis was back")
	}
	require.Eventually(t, func() bool { return r.Watchers() == 0 }, time.Second, 10*time.Millisecond)
	back := watchOf(t, r, evs.Filter{}, "")
	require.Equal(t, 1, r.Watchers(), "watches are on the stream again")
	ids := xadd(t, client, 10_000, events(2)...)
	assert.Equal(t, ids, entryIDs(receive(t, back, 2)))
}

// drained is closed once w's live channel is.
func drained(w *evs.Watch) <-chan struct{} {
	c := make(chan struct{})
	go func() {
		for range w.Live() {
		}
		close(c)
	}()
	return c
}

func TestReaderLifecycleIsSafeInAnyOrder(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := srv.Client()
	tests := []struct {
		name string
		run  func(t *testing.T, r *eventstream.Reader)
	}{
		{"stop without start", func(t *testing.T, r *eventstream.Reader) { requireStopsReader(t, r) }},
		{"stop twice", func(t *testing.T, r *eventstream.Reader) {
			require.NoError(t, r.Start(context.Background()))
			requireStopsReader(t, r)
			requireStopsReader(t, r)
		}},
		{"start twice", func(t *testing.T, r *eventstream.Reader) {
			require.NoError(t, r.Start(context.Background()))
			require.NoError(t, r.Start(context.Background()))
			requireStopsReader(t, r)
		}},
		{"start after stop", func(t *testing.T, r *eventstream.Reader) {
			requireStopsReader(t, r)
			require.NoError(t, r.Start(context.Background()))
			requireStopsReader(t, r)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := eventstream.NewReader(client, eventstream.ReaderOptions{Local: evs.NewHub(10), Logger: quiet()})
			tc.run(t, r)
			w, err := r.Watch(context.Background(), evs.Filter{}, "")
			require.NoError(t, err)
			_, open := <-w.Live()
			require.False(t, open, "a stopped reader's watches end at once")
		})
	}
}

// Not parallel: it counts the process's goroutines. Stop returns promptly (CLIENT UNBLOCK
// ends the XREAD BLOCK) and leaves no goroutine behind.
func TestReaderStopLeavesNoGoroutine(t *testing.T) {
	srv := redistest.Start(t)
	client := srv.Client()
	require.NoError(t, client.Ping(context.Background()).Err())
	before := redistest.SettledGoroutines(t)

	r := eventstream.NewReader(client, eventstream.ReaderOptions{Local: evs.NewHub(10), Block: time.Minute, Logger: quiet()})
	require.NoError(t, r.Start(context.Background()))
	w, err := r.Watch(context.Background(), evs.Filter{}, "")
	require.NoError(t, err)
	xadd(t, client, 10_000, events(3)...)
	receive(t, w, 3)
	time.Sleep(50 * time.Millisecond) // the reader is blocked in XREAD again
	begin := time.Now()
	requireStopsReader(t, r)
	require.Less(t, time.Since(begin), 2*time.Second, "Stop does not wait for the block time")
	_, open := <-w.Live()
	require.False(t, open)
	w.Close()

	redistest.RequireGoroutinesBackTo(t, before)
}

// xreads returns how many XREADs Redis has served.
func xreads(t *testing.T, client *redis.Client) int64 {
	t.Helper()
	info, err := client.InfoMap(context.Background(), "commandstats").Result()
	require.NoError(t, err)
	stat, ok := info["Commandstats"]["cmdstat_xread"]
	if !ok {
		return 0
	}
	var calls int64
	_, err = fmt.Sscanf(stat, "calls=%d", &calls)
	require.NoError(t, err, stat)
	return calls
}

// A reader nobody watches does not read the stream; the next watch gets every entry written
// after it started, and none from before.
func TestReaderParksWhileNobodyWatches(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := srv.Client()
	r := startReader(t, client, evs.NewHub(10)) // XREAD BLOCK 200ms

	require.Eventually(t, func() bool { // the first read may still be in flight
		before := xreads(t, client)
		time.Sleep(500 * time.Millisecond)
		return xreads(t, client) == before
	}, 10*time.Second, 10*time.Millisecond)
	xadd(t, client, 10_000, events(5)...) // written while parked: not for the next watch
	before := xreads(t, client)
	time.Sleep(600 * time.Millisecond)
	require.Equal(t, before, xreads(t, client), "no XREAD while nobody watches")

	for round := range 3 { // parks again once the watch ends, and wakes again
		w, err := r.Watch(context.Background(), evs.Filter{}, "")
		require.NoError(t, err)
		want := xadd(t, client, 10_000, events(4)...)
		assert.Equal(t, want, entryIDs(receive(t, w, 4)), "round %d", round)
		select {
		case e := <-w.Live():
			require.Failf(t, "an entry beyond those written", "round %d: %s", round, e.ID)
		case <-time.After(100 * time.Millisecond):
		}
		w.Close()
		require.Eventually(t, func() bool {
			before := xreads(t, client)
			time.Sleep(500 * time.Millisecond)
			return xreads(t, client) == before
		}, 10*time.Second, 10*time.Millisecond, "round %d: parked again", round)
		xadd(t, client, 10_000, events(2)...) // not for the next round's watch
	}
}

// The events one Stream wrote together share an entry: each has its own ID in it, live and
// replayed, and a watch resumes after any of them.
func TestReaderSplitsEntriesIntoEvents(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := srv.Client()
	r := startReader(t, client, evs.NewHub(10))
	live := watchOf(t, r, evs.Filter{}, "")

	s := eventstream.New(client, eventstream.Options{Logger: quiet()})
	want := events(10)
	publish(s, want) // before Start: one batch, one entry
	require.NoError(t, s.Start(context.Background()))
	requireStops(t, s)
	msgs, err := client.XRange(context.Background(), "executor:events", "-", "+").Result()
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	ids := []string{msgs[0].ID}
	for i := 1; i < 10; i++ {
		ids = append(ids, fmt.Sprintf("%s-%d", msgs[0].ID, i))
	}

	got := receive(t, live, 10)
	assert.Equal(t, ids, entryIDs(got), "live")
	for i, e := range got {
		assert.Equal(t, want[i], e.Event)
	}

	tests := []struct {
		name  string
		after string
		want  []string
	}{
		{"after the entry's first event", ids[0], ids[1:]},
		{"after one in the middle", ids[3], ids[4:]},
		{"after its last", ids[9], nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := watchOf(t, r, evs.Filter{}, tc.after)
			assert.False(t, w.Gap)
			got := entryIDs(replayAll(t, w))
			if tc.want == nil {
				assert.Empty(t, got)
			} else {
				assert.Equal(t, tc.want, got)
			}
		})
	}
}
