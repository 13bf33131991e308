package lock_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/lease"
	"github.com/executor-dev/executor/infra/lock"
)

func TestMemoryLeaseIsExclusiveUntilReleased(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := lock.NewMemory()

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
	_, err = m.Acquire(ctx, "t1", "plan:task-b")
	require.NoError(t, err)
}

func TestMemoryStaleReleaseDoesNotFreeANewerLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := lock.NewMemory()
	old, err := m.Acquire(ctx, "t1", "old")
	require.NoError(t, err)
	require.NoError(t, old.Release(ctx))
	_, err = m.Acquire(ctx, "t1", "new")
	require.NoError(t, err)
	require.NoError(t, old.Release(ctx))
	h, held, err := m.Holder(ctx, "t1")
	require.NoError(t, err)
	assert.True(t, held)
	assert.Equal(t, "new", h.Owner)
}

func TestMemoryConcurrentAcquireHasOneWinner(t *testing.T) {
	t.Parallel()
	m := lock.NewMemory()
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := m.Acquire(context.Background(), "contended", "x"); err == nil {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	assert.EqualValues(t, 1, wins.Load())
}
