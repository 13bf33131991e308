package batch

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// clockSlots is how many expiries a clock starts per timeout: a wait ends between timeout and
// timeout + timeout/clockSlots after it began.
const clockSlots = 8

// clock hands out expiry channels without a timer per wait: the waits that begin in one slot
// of time (timeout/clockSlots wide) share a channel, closed by one timer timeout + one slot
// after the slot began. A timer and a context per command cost more than the rest of a
// command's bookkeeping on the pipeline.
type clock struct {
	timeout time.Duration
	slot    time.Duration
	cur     atomic.Pointer[clockSlot]
	mu      sync.Mutex // held to start a slot
}

type clockSlot struct {
	n    int64 // the slot's number: its start time / slot
	done chan struct{}
}

func newClock(timeout time.Duration) *clock {
	return &clock{timeout: timeout, slot: max(timeout/clockSlots, time.Millisecond)}
}

// expiry returns a channel closed between timeout and timeout + one slot from now.
func (c *clock) expiry() <-chan struct{} {
	n := time.Now().UnixNano() / int64(c.slot)
	if s := c.cur.Load(); s != nil && s.n == n {
		return s.done
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.cur.Load(); s != nil && s.n == n {
		return s.done
	}
	s := &clockSlot{n: n, done: make(chan struct{})}
	time.AfterFunc(c.timeout+c.slot, func() { close(s.done) })
	c.cur.Store(s)
	return s.done
}

// expiry is a context that ends when its channel closes, with context.DeadlineExceeded: all
// AutoFuture.WaitContext needs, without a timer of its own.
type expiry struct{ done <-chan struct{} }

var _ context.Context = expiry{}

func (e expiry) Deadline() (time.Time, bool) { return time.Time{}, false }
func (e expiry) Done() <-chan struct{}       { return e.done }
func (e expiry) Value(any) any               { return nil }
func (e expiry) Err() error {
	select {
	case <-e.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}
