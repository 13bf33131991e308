package orchestrator_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// orphan makes tenant's task look like a run of another process: RUNNING since heartbeat,
// with no run here. It returns the epoch that run holds.
func (h *harness) orphan(t *testing.T, tenant string, heartbeat time.Time) uint64 {
	t.Helper()
	ctx := context.Background()
	tk, err := h.db.Tasks().Latest(ctx, tenant)
	require.NoError(t, err)
	epochTask, err := h.db.Tasks().BumpFence(ctx, tk.ID())
	require.NoError(t, err)
	epoch := epochTask.Fence()
	require.NoError(t, epochTask.Start(epoch, heartbeat))
	require.NoError(t, h.db.Tasks().Save(ctx, epochTask, nil))
	return epoch
}

func TestRunningTaskWithoutOwnerReadsInterrupted(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8) // lease TTL: the default 60 s
	ctx := context.Background()
	p := h.submit(t, app.SubmitRequest{ // scheduled far ahead: nothing here runs its tasks
		StartAt: time.Now().Add(time.Hour), Tenants: tenants("orph", 3), Stages: stages("noop", "one", "two"),
	})

	stale := time.Now().Add(-2 * time.Minute)
	lostEpoch := h.orphan(t, "orph-000", stale)        // owner gone: stale heartbeat, no lease
	h.orphan(t, "orph-001", stale)                     // owner alive: it still holds its lease
	alive, err := h.db.Tasks().Latest(ctx, "orph-001") // the raw store: a read through the service would judge it
	require.NoError(t, err)
	held, err := h.locker.Acquire(ctx, "orph-001", p.ID()+":"+alive.ID())
	require.NoError(t, err)
	defer func() { _ = held.Release(ctx) }()
	h.orphan(t, "orph-002", time.Now()) // owner beat recently: not judged yet

	lost := h.tenantTask(t, "orph-000")
	assert.Equal(t, task.Interrupted, lost.Status())
	require.NotNil(t, lost.LastError())
	assert.Equal(t, stage.ClassLeaseLost, lost.LastError().Class)
	assert.Greater(t, lost.Fence(), lostEpoch, "the lost run is fenced out")
	stored, err := h.db.Tasks().Task(ctx, lost.ID())
	require.NoError(t, err)
	assert.Equal(t, task.Interrupted, stored.Status(), "persisted, not only reported")

	assert.Equal(t, task.Running, h.tenantStatus(t, "orph-001"), "its lease is held by its run")
	assert.Equal(t, task.Running, h.tenantStatus(t, "orph-002"), "its heartbeat is recent")

	// The lost run's next write is refused.
	zombie, err := task.Load(stored.State())
	require.NoError(t, err)
	ghost := zombie.State()
	ghost.Status, ghost.Fence, ghost.LastError, ghost.FinishedAt = task.Running, lostEpoch, nil, time.Time{}
	zombie, err = task.Load(ghost)
	require.NoError(t, err)
	require.ErrorIs(t, h.db.Tasks().Save(ctx, zombie, nil), task.ErrFenced)

	// Retry from the checkpoint works on the interrupted task.
	v, err := h.svc.RetryTenant(ctx, "orph-000", true)
	require.NoError(t, err)
	assert.Equal(t, 2, v.Task.Attempt())
	pv, err := h.svc.Plan(ctx, p.ID())
	require.NoError(t, err)
	assert.Equal(t, plan.Scheduled, pv.Plan.Status(), "the plan is not started early")
}
