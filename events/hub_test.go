package events_test

import (
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

func TestHubNumbersKeepsAndReplays(t *testing.T) {
	t.Parallel()
	h := events.NewHub(3)
	for i := range 5 {
		h.Publish(taskEvent("p", fmt.Sprint("t", i)))
	}
	tests := []struct {
		name    string
		after   uint64
		want    []uint64
		wantGap bool
	}{
		{"everything kept", 0, []uint64{3, 4, 5}, false},
		{"after the oldest kept one's predecessor: nothing missed", 2, []uint64{3, 4, 5}, false},
		{"after an event already dropped from the ring", 1, []uint64{3, 4, 5}, true},
		{"after the newest: nothing to replay", 5, []uint64{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			replay, sub, gap := h.Subscribe(events.Filter{}, tc.after)
			defer sub.Close()
			assert.Equal(t, tc.want, ids(replay))
			assert.Equal(t, tc.wantGap, gap)
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
		want   []uint64
	}{
		{"none", events.Filter{}, []uint64{1, 2, 3, 4, 5}},
		{"plan", events.Filter{PlanID: "p1"}, []uint64{1, 2, 3}},
		{"tenant across plans, without plan events", events.Filter{TenantID: "a"}, []uint64{2, 4}},
		{"tenant in a plan, with the plan's events", events.Filter{PlanID: "p2", TenantID: "a"}, []uint64{4, 5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			replay, sub, _ := h.Subscribe(tc.filter, 0)
			defer sub.Close()
			assert.Equal(t, tc.want, ids(replay))
		})
	}
}

func TestHubDeliversLiveEventsInOrder(t *testing.T) {
	t.Parallel()
	h := events.NewHub(10)
	_, sub, _ := h.Subscribe(events.Filter{PlanID: "p"}, 0)
	defer sub.Close()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 50 {
				h.Publish(taskEvent("p", fmt.Sprint("w", w, "-", i)))
				h.Publish(taskEvent("other", "x"))
			}
		})
	}
	wg.Wait()
	var last uint64
	for range 200 {
		e := <-sub.Events()
		require.Greater(t, e.ID, last, "IDs grow")
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
	_, slow, _ := h.Subscribe(events.Filter{}, 0)
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
	_, sub, _ := h.Subscribe(events.Filter{}, 0)
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
