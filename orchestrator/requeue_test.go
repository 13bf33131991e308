package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// A retry whose plan cannot be reopened (here: the store no longer holds the plan, as when
// Redis expired it) answers an error and changes nothing: the task keeps its status and
// attempt, nothing is queued. It never leaves the task PENDING with nothing to run it.
func TestARetryThatCannotReopenItsPlanChangesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 4)
	h.register(t, "fails", func(_ context.Context, req stage.Request) (json.RawMessage, error) {
		if req.TenantID == "ro-000" {
			return nil, stage.Permanent(errors.New("bad config"))
		}
		return nil, nil
	})
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("ro", 2), Stages: stages("fails", "one", "two")})
	require.Equal(t, plan.Failed, h.wait(t, p.ID()).Plan.Status())
	h.db.Plans().Forget(p.ID())

	_, err := h.svc.RetryTenant(context.Background(), "ro-000", true)
	require.ErrorIs(t, err, plan.ErrNotFound)

	tk := h.tenantTask(t, "ro-000")
	require.Equal(t, task.Failed, tk.Status(), "the task is left as it was")
	require.Equal(t, 1, tk.Attempt())
	require.Zero(t, h.orch.Queued())
}

// A retry that reopened its plan and then found that the task's tenant moved on answers the
// refusal and settles the plan back: it ends as it was, with the task as it was.
func TestARetryRefusedAfterReopeningLeavesThePlanEnded(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 4)
	h.register(t, "fails", func(context.Context, stage.Request) (json.RawMessage, error) {
		return nil, stage.Permanent(errors.New("no"))
	})
	ctx := context.Background()
	first := h.submit(t, app.SubmitRequest{Tenants: tenants("mo", 1), Stages: stages("fails", "one")})
	require.Equal(t, plan.Failed, h.wait(t, first.ID()).Plan.Status())
	failed := h.tenantTask(t, "mo-000")
	second := h.submit(t, app.SubmitRequest{Tenants: tenants("mo", 1), Stages: stages("noop", "one")})
	h.wait(t, second.ID())

	err := h.orch.RetryTask(ctx, failed.ID(), true)
	var busy *task.BusyError
	require.ErrorAs(t, err, &busy)
	v, err := h.svc.Plan(ctx, first.ID())
	require.NoError(t, err)
	require.Equal(t, plan.Failed, v.Plan.Status(), "the plan is settled back")
	tk, err := h.svc.Task(ctx, failed.ID())
	require.NoError(t, err)
	require.Equal(t, task.Failed, tk.Task.Status())
	require.Equal(t, 1, tk.Task.Attempt())
}
