package events

import "sync"

// subscriberBuffer is how many entries a subscriber may fall behind before it is closed.
const subscriberBuffer = 128

// Fanout hands entries to subscribers, each with its filter, without ever blocking: a
// subscriber that falls subscriberBuffer entries behind is closed (Overflowed). The Hub uses
// one; so does the Redis stream reader (infra/eventstream). Safe for concurrent use.
type Fanout struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{}
}

// NewFanout returns a fan-out without subscribers.
func NewFanout() *Fanout {
	return &Fanout{subs: map[*Subscription]struct{}{}}
}

// Subscribe returns a subscription receiving the matching entries published from now on.
func (o *Fanout) Subscribe(f Filter) *Subscription {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := &Subscription{fan: o, filter: f, ch: make(chan Entry, subscriberBuffer)}
	o.subs[s] = struct{}{}
	return s
}

// Publish hands e to every matching subscriber. It never blocks.
func (o *Fanout) Publish(e Entry) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for s := range o.subs {
		if !s.filter.Match(e.Event) {
			continue
		}
		select {
		case s.ch <- e:
		default: // it fell behind: close it; its client resumes from its last event ID
			s.overflowed = true
			o.drop(s)
		}
	}
}

// CloseAll closes every subscription (their watchers reconnect).
func (o *Fanout) CloseAll() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for s := range o.subs {
		o.drop(s)
	}
}

// Subscribers returns how many subscriptions are open.
func (o *Fanout) Subscribers() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.subs)
}

// drop removes s and closes its channel; o.mu is held.
func (o *Fanout) drop(s *Subscription) {
	if _, ok := o.subs[s]; !ok {
		return
	}
	delete(o.subs, s)
	close(s.ch)
}

// Subscription receives a watcher's entries.
type Subscription struct {
	fan        *Fanout
	filter     Filter
	ch         chan Entry
	overflowed bool // guarded by fan.mu
}

// Events delivers the subscription's entries; it is closed by Close, by the fan-out's
// CloseAll, or when the watcher fell behind (Overflowed).
func (s *Subscription) Events() <-chan Entry { return s.ch }

// Overflowed reports whether the subscription was closed because it fell behind.
func (s *Subscription) Overflowed() bool {
	s.fan.mu.Lock()
	defer s.fan.mu.Unlock()
	return s.overflowed
}

// Close ends the subscription. Safe to call more than once.
func (s *Subscription) Close() {
	s.fan.mu.Lock()
	defer s.fan.mu.Unlock()
	s.fan.drop(s)
}
