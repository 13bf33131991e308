package orchestrator_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

func TestScheduledPlanStartsAtStartAt(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	startAt := time.Now().Add(150 * time.Millisecond)
	p := h.submit(t, app.SubmitRequest{StartAt: startAt, Tenants: tenants("sch", 2), Stages: stages("noop", "one")})
	assert.Equal(t, plan.Scheduled, p.Status())
	assert.Equal(t, task.Pending, h.tenantStatus(t, "sch-000"))

	v := h.wait(t, p.ID())
	assert.Equal(t, plan.Completed, v.Plan.Status())
	assert.False(t, v.Plan.StartedAt().Before(startAt.Truncate(time.Millisecond)), "not started early")
}

func TestScheduledPlanCanBeCancelledBeforeItStarts(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	p := h.submit(t, app.SubmitRequest{StartAt: time.Now().Add(100 * time.Millisecond), Tenants: tenants("schc", 2), Stages: stages("noop", "one")})
	v, err := h.svc.CancelPlan(context.Background(), p.ID())
	require.NoError(t, err)
	assert.Equal(t, plan.Cancelled, v.Plan.Status())
	assert.Equal(t, 2, v.Progress.Counts[task.Cancelled])
	time.Sleep(200 * time.Millisecond) // past its start time: it must not start
	v, err = h.svc.Plan(context.Background(), p.ID())
	require.NoError(t, err)
	assert.Equal(t, plan.Cancelled, v.Plan.Status())
	assert.True(t, v.Plan.StartedAt().IsZero())
}
