package orchestrator_test

import (
	"context"
	"sync"
	"testing"

	"github.com/executor-dev/executor/orchestrator"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

func TestUnlockFreesATenantAndFencesItsRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 4)
	var once sync.Once
	gateOpen := h.gate(t, "stuck")
	open := func() { once.Do(gateOpen) }
	defer open()
	ctx := context.Background()
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("ul", 1), Stages: stages("stuck", "one")})
	eventually(t, "running", func() bool { return h.tenantStatus(t, "ul-000") == task.Running })
	before, err := h.svc.TenantLock(ctx, "ul-000")
	require.NoError(t, err)
	require.True(t, before.Held)
	tk := h.tenantTask(t, "ul-000")
	assert.Equal(t, p.ID()+":"+tk.ID()+"@"+orchestrator.DefaultName, before.Holder.Owner, "the lease names the task and the executor running it")
	assert.Equal(t, tk.Fence(), before.Epoch)

	out, err := h.svc.UnlockTenant(ctx, "ul-000")
	require.NoError(t, err)
	assert.True(t, out.Released)
	assert.Equal(t, before.Holder.Owner, out.Previous.Owner)
	assert.Equal(t, tk.ID(), out.TaskID)
	assert.Greater(t, out.Epoch, before.Epoch, "the old holder is fenced")
	assert.True(t, out.Interrupted)

	after := h.tenantTask(t, "ul-000")
	assert.Equal(t, task.Interrupted, after.Status())
	require.NotNil(t, after.LastError())
	assert.Equal(t, stage.ClassLeaseLost, after.LastError().Class)
	lock, err := h.svc.TenantLock(ctx, "ul-000")
	require.NoError(t, err)
	assert.False(t, lock.Held)
	assert.Equal(t, out.Epoch, lock.Epoch)
	v := h.wait(t, p.ID())
	assert.Equal(t, plan.Failed, v.Plan.Status(), "an interrupted task fails the plan until retried")

	// The tenant can be retried at once: nothing holds it.
	open()
	_, err = h.svc.RetryTenant(ctx, "ul-000", true)
	require.NoError(t, err)
	v = h.wait(t, p.ID())
	assert.Equal(t, plan.Completed, v.Plan.Status())
}

func TestUnlockOfAnIdleTenant(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 4)
	ctx := context.Background()
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("ui", 1), Stages: stages("noop", "one")})
	h.wait(t, p.ID())
	out, err := h.svc.UnlockTenant(ctx, "ui-000")
	require.NoError(t, err)
	assert.False(t, out.Released)
	assert.False(t, out.Interrupted)
	assert.Equal(t, task.Completed, h.tenantStatus(t, "ui-000"), "a finished task is left alone")

	_, err = h.svc.UnlockTenant(ctx, "nobody")
	require.ErrorIs(t, err, task.ErrNotFound)
	_, err = h.svc.TenantLock(ctx, "nobody")
	require.ErrorIs(t, err, task.ErrNotFound)
	_, err = h.svc.TenantLock(ctx, "bad:id")
	require.ErrorIs(t, err, app.ErrInvalidInput)
}
