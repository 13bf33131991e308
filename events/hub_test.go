package events_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/event"
	"github.com/executor-dev/executor/events"
)

func taskEvent(plan, tenant string) event.Event {
	return event.Event{Kind: event.Task, PlanID: plan, TaskID: "task-" + tenant, TenantID: tenant, Status: "RUNNING"}
}

func ids(es []event.Event) []uint64 {
	out := make([]uint64, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

// replayed reads a watch's whole replay, and returns the entries' IDs.
func replayed(t *testing.T, w *events.Watch) []string {
	t.Helper()
	out := []string{}
	for {
		page, err := w.Replay(context.Background())
		require.NoError(t, err)
		if len(page) == 0 {
			return out
		}
		for _, e := range page {
			out = append(out, e.ID)
		}
	}
}

// watch starts a watch of h, closed when the test ends.
func watch(t *testing.T, h *events.Hub, f events.Filter, last string) *events.Watch {
	t.Helper()
	w, err := h.Watch(context.Background(), f, last)
	require.NoError(t, err)
	t.Cleanup(w.Close)
	return w
}

func TestHubNumbersKeepsAndReplays(t *testing.T) {
	t.Parallel()
	h := events.NewHub(3)
	for i := range 5 {
		h.Publish(taskEvent("p", fmt.Sprint("t", i)))
	}
	tests := []struct {
		name    string
		after   string
		want    []string
		wantGap bool
	}{
		{"without Last-Event-ID: nothing old", "", []string{}, false},
		{"after the oldest kept one's predecessor: nothing missed", "2", []string{"3", "4", "5"}, false},
		{"after an event already dropped from the ring", "1", []string{"3", "4", "5"}, true},
		{"after zero: every kept one, some missed", "0", []string{"3", "4", "5"}, true},
		{"after the newest: nothing to replay", "5", []string{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := watch(t, h, events.Filter{}, tc.after)
			assert.Equal(t, tc.want, replayed(t, w))
			assert.Equal(t, tc.wantGap, w.Gap)
		})
	}
}

func TestHubFilters(t *testing.T) {
	t.Parallel()
	h := events.NewHub(100)
	h.Publish(event.Event{Kind: event.Plan, PlanID: "p1", Status: "RUNNING"})
	h.Publish(taskEvent("p1", "a"))
	h.Publish(taskEvent("p1", "b"))
	h.Publish(taskEvent("p2", "a"))
	h.Publish(event.Event{Kind: event.Plan, PlanID: "p2", Status: "RUNNING"})
	tests := []struct {
		name   string
		filter events.Filter
		want   []string
	}{
		{"none", events.Filter{}, []string{"1", "2", "3", "4", "5"}},
		{"plan", events.Filter{PlanID: "p1"}, []string{"1", "2", "3"}},
		{"tenant across plans, without plan events", events.Filter{TenantID: "a"}, []string{"2", "4"}},
		{"tenant in a plan, with the plan's events", events.Filter{PlanID: "p2", TenantID: "a"}, []string{"4", "5"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, replayed(t, watch(t, h, tc.filter, "0")))
		})
	}
}

func TestHubDeliversLiveEventsInOrder(t *testing.T) {
	t.Parallel()
	h := events.NewHub(10)
	sub := h.Subscribe(events.Filter{PlanID: "p"})
	defer sub.Close()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 25 { // 100 in all: within a subscriber's buffer
				h.Publish(taskEvent("p", fmt.Sprint("w", w, "-", i)))
				h.Publish(taskEvent("other", "x"))
			}
		})
	}
	wg.Wait()
	var last uint64
	for range 100 {
		en := <-sub.Events()
		e := en.Event
		require.Greater(t, e.ID, last, "IDs grow")
		require.Equal(t, fmt.Sprint(e.ID), en.ID, "the entry's ID is the event's number")
		require.Equal(t, "p", e.PlanID)
		require.False(t, e.At.IsZero(), "the hub stamps the time")
		last = e.ID
	}
	select {
	case e := <-sub.Events():
		t.Fatalf("an event of another plan went through: %+v", e)
	default:
	}
}

func TestHubClosesASubscriberThatFellBehind(t *testing.T) {
	t.Parallel()
	h := events.NewHub(10)
	slow := h.Subscribe(events.Filter{})
	for i := range 5000 { // far more than a subscriber's buffer; Publish must not block
		h.Publish(taskEvent("p", fmt.Sprint(i)))
	}
	n := 0
	for range slow.Events() {
		n++
	}
	assert.Positive(t, n, "it got what fitted before it was closed")
	assert.Less(t, n, 5000)
	assert.True(t, slow.Overflowed())
	assert.Zero(t, h.Subscribers())
	slow.Close() // closing again is harmless
}

func TestSubscriptionCloseIsIdempotent(t *testing.T) {
	t.Parallel()
	h := events.NewHub(10)
	sub := h.Subscribe(events.Filter{})
	require.Equal(t, 1, h.Subscribers())
	sub.Close()
	sub.Close()
	_, open := <-sub.Events()
	assert.False(t, open)
	assert.False(t, sub.Overflowed())
	assert.Zero(t, h.Subscribers())
	h.Publish(taskEvent("p", "a")) // no subscriber: nothing to send to
}

func TestHubPassesNumberedEventsOn(t *testing.T) {
	t.Parallel()
	h := events.NewHub(2)
	next := &collect{}
	h.Then(next)
	for i := range 3 {
		h.Publish(taskEvent("p", fmt.Sprint(i)))
	}
	require.Equal(t, []uint64{1, 2, 3}, ids(next.got), "every event, numbered, even those the ring dropped")
	assert.False(t, next.got[0].At.IsZero())
}

type collect struct{ got []event.Event }

func (c *collect) Publish(e event.Event) { c.got = append(c.got, e) }

func TestHubWatchRefusesAMalformedID(t *testing.T) {
	t.Parallel()
	h := events.NewHub(10)
	for _, id := range []string{"yesterday", "-1", "1732390000123-0", "+4", "1.5"} {
		t.Run(id, func(t *testing.T) {
			t.Parallel()
			_, err := h.Watch(context.Background(), events.Filter{}, id)
			require.ErrorIs(t, err, events.ErrBadID)
		})
	}
	require.Zero(t, h.Subscribers(), "a refused watch leaves no subscription")
}

// A watch resumed from an ID replays what the ring keeps after it, then gets the live
// events: none missed between the two, none twice.
func TestHubWatchReplaysThenGoesLive(t *testing.T) {
	t.Parallel()
	h := events.NewHub(2000)
	for i := range 1200 { // more than a replay page
		h.Publish(taskEvent("p", fmt.Sprint(i)))
	}
	w := watch(t, h, events.Filter{}, "100")
	h.Publish(taskEvent("p", "live"))
	got := replayed(t, w)
	require.Len(t, got, 1100)
	assert.Equal(t, "101", got[0])
	assert.Equal(t, "1200", got[len(got)-1])
	e := <-w.Live()
	require.True(t, w.Fresh(e))
	assert.Equal(t, "1201", e.ID)
}

func TestCompareIDs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a, b string
		want int
	}{
		{"numbers", "9", "10", -1},
		{"same", "42", "42", 0},
		{"stream ids by time", "1732390000123-5", "1732390000124-0", -1},
		{"stream ids by sequence", "1732390000123-5", "1732390000123-4", 1},
		{"a number is its id with sequence 0", "1732390000123", "1732390000123-0", 0},
		{"events of one entry by index", "1732390000123-5-2", "1732390000123-5-10", -1},
		{"an entry's id is its first event's", "1732390000123-5", "1732390000123-5-0", 0},
		{"an entry's later event after its first", "1732390000123-5-1", "1732390000123-5", 1},
		{"the next entry after every event of the previous", "1732390000123-6", "1732390000123-5-900", 1},
		{"malformed first", "x", "1", -1},
		{"four parts are malformed", "1-2-3-4", "1", -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, events.CompareIDs(tc.a, tc.b))
		})
	}
}

func TestStreamEntryID(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]string{"17-3": "17-3", "17-3-2": "17-3", "17": "17-0"} {
		assert.Equal(t, want, events.StreamEntryID(id), id)
	}
}

// A watch resumed from an ID this hub never gave (an earlier process's: an executor on the
// memory store restarted) is told of a gap and gets every event from then on, though their
// numbers restarted below its ID.
func TestHubWatchFromAnEarlierProcessIsAGapThenLive(t *testing.T) {
	t.Parallel()
	h := events.NewHub(100)
	for i := range 3 {
		h.Publish(taskEvent("p", fmt.Sprint(i)))
	}
	w := watch(t, h, events.Filter{}, "1000")
	assert.True(t, w.Gap)
	assert.Empty(t, replayed(t, w))
	h.Publish(taskEvent("p", "live"))
	e := <-w.Live()
	require.True(t, w.Fresh(e), "event %s is delivered", e.ID)
	assert.Equal(t, "4", e.ID)
}
