package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

func TestRetryPlanRetriesTheTasksInTheNamedStatuses(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	var broken atomic.Bool
	broken.Store(true)
	h.register(t, "flaky", func(_ context.Context, req stage.Request) (json.RawMessage, error) {
		if broken.Load() && req.TenantID != "rp-000" {
			return nil, stage.Permanent(errors.New("bad config"))
		}
		return nil, nil
	})
	ctx := context.Background()
	s := stages("noop", "one", "two")
	s[1].Kind = "flaky"
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("rp", 4), Stages: s})
	v := h.wait(t, p.ID())
	require.Equal(t, plan.Failed, v.Plan.Status())
	require.Equal(t, 3, v.Progress.Counts[task.Failed])
	_, err := h.svc.CancelTenant(ctx, "rp-003") // FAILED cannot be cancelled: stays FAILED
	require.ErrorIs(t, err, task.ErrInvalidTransition)

	_, err = h.svc.RetryPlan(ctx, p.ID(), app.RetryPlanRequest{Statuses: []task.Status{task.Completed}})
	require.ErrorIs(t, err, app.ErrInvalidInput, "COMPLETED tasks are not retried")

	broken.Store(false)
	out, err := h.svc.RetryPlan(ctx, p.ID(), app.RetryPlanRequest{FromCheckpoint: true}) // FAILED and INTERRUPTED
	require.NoError(t, err)
	assert.Len(t, out.Retried, 3)
	assert.Empty(t, out.Skipped)
	v = h.wait(t, p.ID())
	assert.Equal(t, plan.Completed, v.Plan.Status())
	for _, tn := range []string{"rp-001", "rp-002", "rp-003"} {
		tk := h.tenantTask(t, tn)
		assert.Equal(t, 2, tk.Attempt(), "%s ran a second time", tn)
		for _, a := range tk.Ledger() {
			if a.Run == 2 {
				assert.NotEqual(t, "one", a.Stage, "%s: from the checkpoint, stage one is not run again", tn)
			}
		}
	}
	assert.Equal(t, 1, h.tenantTask(t, "rp-000").Attempt(), "a COMPLETED task is not retried")
}

func TestRetryPlanSkipsATenantThatMovedOn(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	h.register(t, "fails", func(context.Context, stage.Request) (json.RawMessage, error) {
		return nil, stage.Permanent(errors.New("no"))
	})
	ctx := context.Background()
	first := h.submit(t, app.SubmitRequest{Tenants: tenants("mv", 2), Stages: stages("fails", "one")})
	h.wait(t, first.ID())
	// mv-001 is rolled out again by a new plan: the old plan's task is no longer its latest.
	second := h.submit(t, app.SubmitRequest{Tenants: []app.TenantInput{{ID: "mv-001"}}, Stages: stages("noop", "one")})
	h.wait(t, second.ID())

	out, err := h.svc.RetryPlan(ctx, first.ID(), app.RetryPlanRequest{})
	require.NoError(t, err)
	require.Len(t, out.Retried, 1)
	assert.Equal(t, "mv-000", out.Retried[0].TenantID)
	require.Len(t, out.Skipped, 1)
	assert.Equal(t, "mv-001", out.Skipped[0].TenantID)
	assert.NotEmpty(t, out.Skipped[0].Reason)
}
