package events

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/executor-dev/executor/domain/event"
)

// DefaultRingSize is how many of the latest events a hub keeps for resuming watchers.
const DefaultRingSize = 10_000

// Filter selects events: an empty field matches every value.
type Filter struct {
	PlanID   string
	TenantID string
}

// Match reports whether e passes f. A plan event has no tenant: a tenant filter lets it
// through only when it also names the plan (a watcher of one tenant in one plan sees the
// plan's status; a watcher of a tenant alone does not see every plan's).
func (f Filter) Match(e event.Event) bool {
	if f.PlanID != "" && e.PlanID != f.PlanID {
		return false
	}
	if f.TenantID != "" && e.TenantID != f.TenantID {
		return e.Kind == event.Plan && f.PlanID != ""
	}
	return true
}

// Hub numbers, keeps and fans out events. Safe for concurrent use.
type Hub struct {
	mu    sync.Mutex
	ring  []event.Event // the latest events, a circular buffer of at most size
	start int           // the index of the oldest event in ring once it is full
	size  int
	next  uint64 // the ID of the next event
	fan   *Fanout
	now   func() time.Time
	then  event.Publisher // told of every event once numbered; nil: nobody
}

var _ event.Publisher = (*Hub)(nil)

// NewHub returns a hub keeping the latest size events (DefaultRingSize when size < 1).
func NewHub(size int) *Hub {
	if size < 1 {
		size = DefaultRingSize
	}
	return &Hub{size: size, next: 1, fan: NewFanout(), now: time.Now}
}

// Then makes p receive every event after the hub numbered it, in ID order (the Redis Stream
// sink). Call it before the first Publish; p must not block.
func (h *Hub) Then(p event.Publisher) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.then = p
}

// Publish numbers e, keeps it and hands it to every matching subscriber. It never blocks.
func (h *Hub) Publish(e event.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e.ID = h.next
	h.next++
	if e.At.IsZero() {
		e.At = h.now().UTC()
	}
	if len(h.ring) < h.size {
		h.ring = append(h.ring, e)
	} else {
		h.ring[h.start] = e
		h.start = (h.start + 1) % h.size
	}
	if h.then != nil {
		h.then.Publish(e)
	}
	h.fan.Publish(entryOf(e))
}

// entryOf is e as the hub's watchers get it: its number is its ID.
func entryOf(e event.Event) Entry { return Entry{ID: strconv.FormatUint(e.ID, 10), Event: e} }

// Subscribe returns a subscription receiving the matching events published from now on.
func (h *Hub) Subscribe(f Filter) *Subscription { return h.fan.Subscribe(f) }

// Watch starts a watch of the matching events: with lastEventID "", the events published
// from now on only; else first those kept after it (a decimal event number; ErrBadID
// otherwise), with Gap when some after it were already dropped from the ring.
func (h *Hub) Watch(_ context.Context, f Filter, lastEventID string) (*Watch, error) {
	var after uint64
	if lastEventID != "" {
		n, err := strconv.ParseUint(lastEventID, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: %q", ErrBadID, lastEventID)
		}
		after = n
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	live := h.fan.Subscribe(f)
	if lastEventID == "" {
		return NewWatch(live, f, false, "", nil), nil
	}
	if after >= h.next {
		// An id this hub never gave: the watcher saw an earlier process's events (an executor
		// on the memory store restarted). What it missed is unknown: a gap, then every event
		// from now on (ids restarted from 1 would all be "before" its id).
		return NewWatch(live, f, true, "", nil), nil
	}
	n := len(h.ring)
	gap := n > 0 && h.ring[h.start].ID > after+1
	var kept []Entry
	for i := range n {
		if e := h.ring[(h.start+i)%n]; e.ID > after {
			kept = append(kept, entryOf(e))
		}
	}
	return NewWatch(live, f, gap, lastEventID, slicePager(kept)), nil
}

// slicePager pages through kept, entries in ID order.
func slicePager(kept []Entry) Pager {
	return func(_ context.Context, after string) ([]Entry, string, error) {
		i, _ := slices.BinarySearchFunc(kept, after, func(e Entry, id string) int { return CompareIDs(e.ID, id) })
		for i < len(kept) && CompareIDs(kept[i].ID, after) <= 0 {
			i++
		}
		if i == len(kept) {
			return nil, "", nil
		}
		page := kept[i:min(i+ReplayPage, len(kept))]
		return page, page[len(page)-1].ID, nil
	}
}

// Subscribers returns how many subscriptions are open.
func (h *Hub) Subscribers() int { return h.fan.Subscribers() }
