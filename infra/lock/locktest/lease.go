package locktest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/lease"
)

// leaseTTL is the lease TTL of the lease and Holder cases: long enough that no lease is lost
// to a late refresh on a loaded machine.
const leaseTTL = 5 * time.Second

func testExclusiveUntilReleased(t *testing.T, newSubject func(*testing.T, time.Duration) Subject) {
	ctx := context.Background()
	m := newSubject(t, leaseTTL).Locker

	l, err := m.Acquire(ctx, "t1", "plan:task-a")
	require.NoError(t, err)
	_, err = m.Acquire(ctx, "t1", "plan:task-b")
	require.ErrorIs(t, err, lease.ErrHeld)

	h, held, err := m.Holder(ctx, "t1")
	require.NoError(t, err)
	assert.True(t, held)
	assert.Equal(t, "plan:task-a", h.Owner)

	other, err := m.Acquire(ctx, "t2", "plan:task-c")
	require.NoError(t, err, "leases are per tenant")
	require.NoError(t, other.Release(ctx))

	require.NoError(t, l.Release(ctx))
	require.NoError(t, l.Release(ctx), "releasing twice is harmless")
	_, held, err = m.Holder(ctx, "t1")
	require.NoError(t, err)
	assert.False(t, held)
	next, err := m.Acquire(ctx, "t1", "plan:task-b")
	require.NoError(t, err)
	require.NoError(t, next.Release(ctx))
}

func testStaleRelease(t *testing.T, newSubject func(*testing.T, time.Duration) Subject) {
	ctx := context.Background()
	m := newSubject(t, leaseTTL).Locker
	old, err := m.Acquire(ctx, "t1", "old")
	require.NoError(t, err)
	require.NoError(t, old.Release(ctx))
	next, err := m.Acquire(ctx, "t1", "new")
	require.NoError(t, err)
	t.Cleanup(func() { _ = next.Release(context.Background()) })
	require.NoError(t, old.Release(ctx))
	h, held, err := m.Holder(ctx, "t1")
	require.NoError(t, err)
	assert.True(t, held)
	assert.Equal(t, "new", h.Owner)
}

func testConcurrentAcquire(t *testing.T, newSubject func(*testing.T, time.Duration) Subject) {
	m := newSubject(t, leaseTTL).Locker
	const n = 50
	var (
		mu      sync.Mutex
		winners []lease.Lease
		losses  []error
		wg      sync.WaitGroup
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := m.Acquire(context.Background(), "contended", fmt.Sprintf("plan:task-%d", i))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				losses = append(losses, err)
				return
			}
			winners = append(winners, l)
		}()
	}
	wg.Wait()
	require.Len(t, winners, 1)
	require.Len(t, losses, n-1)
	for _, err := range losses {
		require.ErrorIs(t, err, lease.ErrHeld)
	}
	require.NoError(t, winners[0].Release(context.Background()))
}

func testReleaseIsIdempotent(t *testing.T, newSubject func(*testing.T, time.Duration) Subject) {
	ctx := context.Background()
	s := newSubject(t, leaseTTL)
	l := s.acquire(t, "double", "p:t")
	require.NoError(t, l.Release(ctx))
	require.NoError(t, l.Release(ctx))
	RequireNotLost(t, l)
}

func testConcurrentReleases(t *testing.T, newSubject func(*testing.T, time.Duration) Subject) {
	ctx := context.Background()
	s := newSubject(t, leaseTTL)
	l := s.acquire(t, "t1", "p:a")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = l.Release(ctx) }()
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	if s.Stored != nil {
		_, ok, err := s.Stored(ctx, "t1")
		require.NoError(t, err)
		assert.False(t, ok, "release deletes the key")
	}
}

func testHolder(t *testing.T, newSubject func(*testing.T, time.Duration) Subject) {
	tests := []struct {
		name      string
		setup     func(t *testing.T, s Subject)
		wantHeld  bool
		wantOwner string
	}{
		{
			name:      "held",
			setup:     func(t *testing.T, s Subject) { s.acquire(t, "t1", "plan-1:task-a") },
			wantHeld:  true,
			wantOwner: "plan-1:task-a",
		},
		{
			name:  "not held",
			setup: func(*testing.T, Subject) {},
		},
		{
			name: "released",
			setup: func(t *testing.T, s Subject) {
				require.NoError(t, s.acquire(t, "t1", "plan-1:task-a").Release(context.Background()))
			},
		},
		{
			name:  "another tenant held",
			setup: func(t *testing.T, s Subject) { s.acquire(t, "t2", "plan-1:task-a") },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newSubject(t, leaseTTL)
			tt.setup(t, s)
			h, held, err := s.Locker.Holder(context.Background(), "t1")
			require.NoError(t, err)
			assert.Equal(t, tt.wantHeld, held)
			if !tt.wantHeld {
				assert.Equal(t, lease.Holder{}, h)
				return
			}
			assert.Equal(t, tt.wantOwner, h.Owner)
			s.requireTTL(t, h.TTL, leaseTTL)
		})
	}
}

// testAfterLost: a func registered with AfterLost runs once the lease is lost (here by a
// force release), once; one stopped before never runs, and its stop says it stopped it; one
// registered after the loss runs at once; stopping after the run reports nothing stopped.
func testAfterLost(t *testing.T, newSubject func(*testing.T, time.Duration) Subject) {
	s := newSubject(t, forceTTL)
	l := s.acquire(t, "t1", "plan-1:task-a")
	ran, stoppedRan := make(chan struct{}, 2), make(chan struct{}, 1)
	stop := l.AfterLost(func() { ran <- struct{}{} })
	stopBefore := l.AfterLost(func() { stoppedRan <- struct{}{} })
	require.True(t, stopBefore(), "stopped before the loss")
	require.False(t, stopBefore(), "stopped once")

	_, ok, err := s.Locker.ForceRelease(context.Background(), "t1")
	require.NoError(t, err)
	require.True(t, ok)
	WaitLost(t, l, 5*forceTTL)
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		require.FailNow(t, "the func registered with AfterLost did not run on the loss")
	}
	assert.False(t, stop(), "it ran: nothing left to stop")

	late := make(chan struct{})
	lateStop := l.AfterLost(func() { close(late) })
	select {
	case <-late:
	case <-time.After(10 * time.Second):
		require.FailNow(t, "a func registered after the loss did not run")
	}
	assert.False(t, lateStop())
	time.Sleep(50 * time.Millisecond) // a second run, or the stopped func, would show by now
	assert.Empty(t, ran, "ran once")
	assert.Empty(t, stoppedRan, "the func stopped before the loss never ran")
}
