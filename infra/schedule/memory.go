package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/executor-dev/executor/infra/due"
)

// defaultRetryDelay is MemoryOptions.RetryDelay's default.
const defaultRetryDelay = time.Second

// errEmptyPlanID rejects an entry without a plan id.
var errEmptyPlanID = errors.New("schedule: empty plan id")

// MemoryOptions configures a Memory scheduler.
type MemoryOptions struct {
	// RetryDelay is how long after a failed Due call the entry is due again; zero or
	// negative means 1s.
	RetryDelay time.Duration
	// Logger receives failed Due calls; nil means slog.Default().
	Logger *slog.Logger
}

// Memory is an in-process scheduler: a timer heap served by one goroutine with one
// time.Timer armed for the earliest entry. Each due entry is taken off the heap and Due is
// called for it in a goroutine of its own; a failed call puts the entry back, due again
// after RetryDelay. Entries live as long as the Memory; they are not shared with any other
// process.
//
// Schedule and Unschedule may be called at any time, before Start and after Stop included;
// entries fire only while the scheduler runs (between Start and Stop).
type Memory struct {
	retry time.Duration
	log   *slog.Logger

	mu    sync.Mutex
	plans due.Queue     // by their start
	poke  chan struct{} // capacity 1: the earliest entry changed

	life    sync.Mutex // serialises SetDue, Start and Stop
	due     Due        // set by SetDue, run by Start
	started bool
	cancel  context.CancelFunc // cancels the loop and the ctx of Due calls
	done    chan struct{}      // closed when the loop has returned
	calls   sync.WaitGroup     // Due calls in flight
}

// NewMemory returns a Memory scheduler, not yet started.
func NewMemory(opts MemoryOptions) *Memory {
	if opts.RetryDelay <= 0 {
		opts.RetryDelay = defaultRetryDelay
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Memory{
		retry: opts.RetryDelay,
		log:   opts.Logger,
		poke:  make(chan struct{}, 1),
	}
}

// SetDue sets the callback that starts the plans whose time has come; call it before Start.
func (m *Memory) SetDue(due Due) {
	m.life.Lock()
	defer m.life.Unlock()
	m.due = due
}

// Start runs the loop that calls Due (see SetDue) for each entry whose time has come, until
// Stop: ctx only passes its values on to the Due calls. It fails when SetDue was not called.
// Only the first Start of a Memory has an effect; a stopped Memory is not started again.
func (m *Memory) Start(ctx context.Context) error {
	m.life.Lock()
	defer m.life.Unlock()
	if m.started {
		return nil
	}
	if m.due == nil {
		return errNoDue
	}
	m.started = true
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.cancel, m.done = cancel, make(chan struct{})
	go m.loop(ctx, m.due)
	return nil
}

// Stop stops the loop, cancels the context given to Due calls and waits for them to return,
// or gives up when ctx ends (they return by themselves then, being cancelled). The entries
// stay (Schedule and Unschedule still work) but no longer fire. Stop is idempotent; stopping
// a Memory that was never started does nothing.
func (m *Memory) Stop(ctx context.Context) error {
	m.life.Lock()
	defer m.life.Unlock()
	if m.cancel == nil {
		return nil
	}
	m.cancel()
	if err := awaitClosed(ctx, m.done); err != nil {
		return err
	}
	return awaitCalls(ctx, &m.calls)
}

// Schedule makes plan planID due at at; re-scheduling an id replaces its time. It fails only
// for an empty planID.
func (m *Memory) Schedule(_ context.Context, planID string, at time.Time) error {
	if planID == "" {
		return errEmptyPlanID
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.put(planID, at)
	return nil
}

// put adds or moves planID's entry, and wakes the loop when the entry is now the earliest.
// m.mu must be held.
func (m *Memory) put(planID string, at time.Time) {
	if m.plans.Set(planID, at) {
		select {
		case m.poke <- struct{}{}:
		default:
		}
	}
}

// Unschedule removes plan planID's entry. It reports true when the entry was still there,
// i.e. not yet taken for a Due call (or put back after a failed one).
func (m *Memory) Unschedule(_ context.Context, planID string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.plans.Remove(planID), nil
}

// loop fires due entries and sleeps until the earliest one's time, a new earliest entry, or
// Stop.
func (m *Memory) loop(ctx context.Context, due Due) {
	defer close(m.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if wait, ok := m.fire(ctx, due); ok {
			timer.Reset(wait)
		} else {
			timer.Stop()
		}
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-m.poke:
		}
	}
}

// fire takes every entry whose time has come off the heap and calls due for each in a
// goroutine of its own. It returns how long until the next entry is due, ok false when
// there is none.
func (m *Memory) fire(ctx context.Context, due Due) (wait time.Duration, ok bool) {
	m.mu.Lock()
	now := time.Now()
	var ids []string
	for id, ok := m.plans.Pop(now); ok; id, ok = m.plans.Pop(now) {
		ids = append(ids, id)
	}
	if next, found := m.plans.Next(); found {
		wait, ok = next.Sub(now), true
	}
	m.mu.Unlock()
	for _, id := range ids {
		m.calls.Go(func() { m.call(ctx, due, id) })
	}
	return wait, ok
}

// call runs due for planID; on error the entry is due again after RetryDelay, unless it was
// re-scheduled meanwhile.
func (m *Memory) call(ctx context.Context, due Due, planID string) {
	err := due(ctx, planID)
	if err == nil {
		return
	}
	m.log.Warn("schedule: starting a scheduled plan failed; retrying",
		"plan", planID, "retry_in", m.retry, "err", fmt.Errorf("schedule: due %s: %w", planID, err))
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.plans.Has(planID) {
		m.put(planID, time.Now().Add(m.retry))
	}
}
