package dispatch

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestMemoryPacingFollowsItsClock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name         string
		rate         int
		wantInterval time.Duration
	}{
		{"one a second", 60, time.Second},
		{"thirty a minute", 30, 2 * time.Second},
		{"seven a minute, to the millisecond", 7, 8571 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := &fakeClock{now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
			m := NewMemory(MemoryOptions{Clock: clock.Now})
			require.NoError(t, m.Push(ctx, "P", Limits{MaxConcurrency: 10, StartRate: tc.rate}, ids(3)))
			assert.Equal(t, "T000", claim(t, m, "P", "e1"))
			_, wait, err := m.Claim(ctx, "P", "e1")
			require.NoError(t, err)
			assert.Equal(t, tc.wantInterval, wait)
			clock.Advance(tc.wantInterval - time.Millisecond)
			_, wait, err = m.Claim(ctx, "P", "e1")
			require.NoError(t, err)
			assert.Equal(t, time.Millisecond, wait)
			clock.Advance(time.Millisecond)
			assert.Equal(t, "T001", claim(t, m, "P", "e1"))
			inflight, err := m.InFlight(ctx, "P")
			require.NoError(t, err)
			assert.Equal(t, clock.Now(), inflight["T001"].Since, "claimed at the clock's time")
			// A long pause earns no burst: one start, then the interval again.
			clock.Advance(time.Hour)
			assert.Equal(t, "T002", claim(t, m, "P", "e1"))
			require.NoError(t, m.Push(ctx, "P", Limits{MaxConcurrency: 10, StartRate: tc.rate}, []string{"T003"}))
			_, wait, err = m.Claim(ctx, "P", "e1")
			require.NoError(t, err)
			assert.Equal(t, tc.wantInterval, wait)
		})
	}
}
