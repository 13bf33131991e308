package memrepo

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// sweeper is the embedded store's background sweep (Start, Stop): a loop that runs Sweep
// every SweepEvery.
type sweeper struct {
	every   time.Duration
	mu      sync.Mutex // serialises Start and Stop
	started bool
	cancel  context.CancelFunc // ends the loop
	done    chan struct{}      // closed when the loop has returned
}

// Start runs the sweep (Sweep) every StoreOptions.SweepEvery in a goroutine of its own,
// until Stop: ctx only bounds the start, and passes its values on. A DB that keeps
// everything (New, NewMirror) starts nothing. Only the first Start has an effect; a stopped
// DB is not started again.
func (db *DB) Start(ctx context.Context) error {
	s := &db.sweeper
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || db.expiry == nil {
		return nil
	}
	s.started = true
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel, s.done = cancel, make(chan struct{})
	go db.sweepEvery(ctx, s.every, s.done)
	return nil
}

// sweepEvery runs Sweep every every until ctx ends, then closes done.
func (db *DB) sweepEvery(ctx context.Context, every time.Duration, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			db.Sweep(ctx)
		}
	}
}

// Stop ends the sweep and waits for it to return (a plan it is forgetting is forgotten
// first), or gives up when ctx ends. What the store holds stays, and stays readable. Stop is
// idempotent; stopping a DB that was never started does nothing.
func (db *DB) Stop(ctx context.Context) error {
	s := &db.sweeper
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel == nil {
		return nil
	}
	s.cancel()
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("memrepo: stop the sweep: %w", ctx.Err())
	}
}
