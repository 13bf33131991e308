package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// A retry whose plan cannot be reopened (here: the plan was settled COMPLETED by another
// writer, a status that cannot be reopened) answers an error and changes nothing: the task
// keeps its status and attempt, nothing is queued, the plan keeps its status. It never leaves
// the task PENDING with nothing to run it.
func TestARetryThatCannotReopenItsPlanChangesNothing(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		retry func(t *testing.T, h *harness, p *plan.Plan)
	}{
		{name: "tenant retry answers the refusal", retry: func(t *testing.T, h *harness, _ *plan.Plan) {
			t.Helper()
			_, err := h.svc.RetryTenant(context.Background(), "ro-000", true)
			require.ErrorIs(t, err, plan.ErrInvalidTransition)
		}},
		{name: "plan retry skips the task", retry: func(t *testing.T, h *harness, p *plan.Plan) {
			t.Helper()
			out, err := h.svc.RetryPlan(context.Background(), p.ID(), app.RetryPlanRequest{FromCheckpoint: true})
			require.NoError(t, err)
			require.Empty(t, out.Retried)
			require.Len(t, out.Skipped, 1)
			require.Equal(t, "ro-000", out.Skipped[0].TenantID)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, 4)
			h.register(t, "fails", func(_ context.Context, req stage.Request) (json.RawMessage, error) {
				if req.TenantID == "ro-000" {
					return nil, stage.Permanent(errors.New("bad config"))
				}
				return nil, nil
			})
			open := h.gate(t, "held")
			t.Cleanup(open)
			s := stages("fails", "one", "two")
			s[1].Kind = "held"
			p := h.submit(t, app.SubmitRequest{Tenants: tenants("ro", 2), Stages: s})
			eventually(t, "ro-000 failed", func() bool { return h.tenantStatus(t, "ro-000") == task.Failed })
			_, err := h.db.Plans().Update(context.Background(), p.ID(), func(p *plan.Plan) error { return p.Complete(time.Now()) })
			require.NoError(t, err)

			tc.retry(t, h, p)

			tk := h.tenantTask(t, "ro-000")
			require.Equal(t, task.Failed, tk.Status(), "the task is left as it was")
			require.Equal(t, 1, tk.Attempt())
			v, err := h.svc.Plan(context.Background(), p.ID())
			require.NoError(t, err)
			require.Equal(t, plan.Completed, v.Plan.Status())
			require.Zero(t, h.orch.Queued())
		})
	}
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
