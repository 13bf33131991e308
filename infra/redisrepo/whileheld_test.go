package redisrepo_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/outage"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/redistest"
)

// A shared store sends a run's write (made task.WhileHeld) only while the run's lease holds:
// past the deadline nothing is sent, first or again while Redis does not answer, and the write
// fails with task.ErrLeaseExpired instead of waiting out its context.
func TestSharedStoreSendsARunsWriteOnlyWhileItsLeaseHolds(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	proxy := rs.NewProxy()
	mon := outage.NewMonitor(slog.New(slog.DiscardHandler))
	s := redisrepo.New(fastClient(t, proxy.Addr()), redisrepo.Options{Monitor: mon, Logger: slog.New(slog.DiscardHandler), Shared: true})
	require.NoError(t, s.Start(context.Background()))
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	ctx := context.Background()
	p, tasks := newPlan(t, "wh-1")
	require.NoError(t, s.CreatePlan(ctx, p, tasks))
	id := tasks[0].ID()
	tk, err := s.Tasks().BumpFence(ctx, id)
	require.NoError(t, err)
	require.NoError(t, tk.Start(tk.Fence(), time.Now()))

	expired := task.WhileHeld(ctx, func() bool { return false })
	err = s.Tasks().Save(expired, tk, nil)
	require.ErrorIs(t, err, task.ErrLeaseExpired)
	stored, err := s.Tasks().Task(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, task.Pending, stored.Status(), "nothing was sent")

	// Redis away: the write is sent again and again until the lease's deadline, then given up
	// at once, well before its context's end.
	var held atomic.Bool
	held.Store(true)
	proxy.Cut()
	time.AfterFunc(300*time.Millisecond, func() { held.Store(false) })
	wctx, cancel := context.WithTimeout(task.WhileHeld(ctx, held.Load), time.Minute)
	defer cancel()
	err = s.Tasks().Save(wctx, tk, nil)
	require.ErrorIs(t, err, task.ErrLeaseExpired)
	require.NoError(t, wctx.Err(), "given up at the deadline, not at the context's end")
	proxy.Restore()
	require.Eventually(t, func() bool {
		got, err := s.Tasks().Task(ctx, id)
		return err == nil && got.Status() == task.Pending
	}, 10*time.Second, 20*time.Millisecond, "the write never landed")
}
