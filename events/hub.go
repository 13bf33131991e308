package events

import (
	"sync"
	"time"

	"github.com/executor-dev/executor/domain/event"
)

// DefaultRingSize is how many of the latest events a hub keeps for resuming watchers.
const DefaultRingSize = 10_000

// subscriberBuffer is how many events a subscriber may fall behind before it is closed.
const subscriberBuffer = 1024

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
	subs  map[*Subscription]struct{}
	now   func() time.Time
	then  event.Publisher // told of every event once numbered; nil: nobody
}

var _ event.Publisher = (*Hub)(nil)

// NewHub returns a hub keeping the latest size events (DefaultRingSize when size < 1).
func NewHub(size int) *Hub {
	if size < 1 {
		size = DefaultRingSize
	}
	return &Hub{size: size, next: 1, subs: map[*Subscription]struct{}{}, now: time.Now}
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
	for s := range h.subs {
		if !s.filter.Match(e) {
			continue
		}
		select {
		case s.ch <- e:
		default: // it fell behind: close it; its client resumes from its last event ID
			s.overflowed = true
			h.drop(s)
		}
	}
}

// Subscribe returns the matching events kept after ID after (all kept ones when after is 0),
// and a subscription receiving the matching events published from now on. gap is true when
// events after after were already dropped from the ring: the watcher missed some.
func (h *Hub) Subscribe(f Filter, after uint64) (replay []event.Event, s *Subscription, gap bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(h.ring)
	if after > 0 && n > 0 && h.ring[h.start].ID > after+1 {
		gap = true
	}
	for i := range n {
		if e := h.ring[(h.start+i)%n]; e.ID > after && f.Match(e) {
			replay = append(replay, e)
		}
	}
	s = &Subscription{hub: h, filter: f, ch: make(chan event.Event, subscriberBuffer)}
	h.subs[s] = struct{}{}
	return replay, s, gap
}

// drop removes s and closes its channel; h.mu is held.
func (h *Hub) drop(s *Subscription) {
	if _, ok := h.subs[s]; !ok {
		return
	}
	delete(h.subs, s)
	close(s.ch)
}

// Subscription receives a watcher's events.
type Subscription struct {
	hub        *Hub
	filter     Filter
	ch         chan event.Event
	overflowed bool // guarded by hub.mu
}

// Events delivers the subscription's events; it is closed by Close or when the watcher fell
// behind (Overflowed).
func (s *Subscription) Events() <-chan event.Event { return s.ch }

// Overflowed reports whether the hub closed the subscription because it fell behind.
func (s *Subscription) Overflowed() bool {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	return s.overflowed
}

// Close ends the subscription. Safe to call more than once.
func (s *Subscription) Close() {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	s.hub.drop(s)
}

// Subscribers returns how many subscriptions are open.
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}
