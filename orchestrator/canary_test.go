package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// startLog registers kind as a stage that records the tenants it ran for, in order, and fails
// permanently for the tenants in fail.
func (h *harness) startLog(t *testing.T, kind string, fail ...string) func() []string {
	t.Helper()
	var mu sync.Mutex
	var ran []string
	h.register(t, kind, func(_ context.Context, req stage.Request) (json.RawMessage, error) {
		mu.Lock()
		ran = append(ran, req.TenantID)
		mu.Unlock()
		for _, f := range fail {
			if f == req.TenantID {
				return nil, stage.Permanent(errors.New("canary broke"))
			}
		}
		return nil, nil
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), ran...)
	}
}

func TestCanaryAutoStartsTheRestOnlyAfterTheWaveCompleted(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	ran := h.startLog(t, "logged")
	p := h.submit(t, app.SubmitRequest{
		MaxConcurrency: 5, Tenants: tenants("ca", 5), Stages: stages("logged", "one"),
		Canary: plan.Canary{Tenants: 2, Then: plan.ThenAuto},
	})
	v := h.wait(t, p.ID())
	assert.Equal(t, plan.Completed, v.Plan.Status())
	assert.Equal(t, plan.PhasePromoted, v.Plan.Phase())
	got := ran()
	require.Len(t, got, 5)
	assert.ElementsMatch(t, []string{"ca-000", "ca-001"}, got[:2], "the canaries ran first, alone")
}

func TestCanaryApproveWaitsForTheOperator(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	ran := h.startLog(t, "logged")
	ctx := context.Background()
	p := h.submit(t, app.SubmitRequest{
		Tenants: tenants("cp", 3), Stages: stages("logged", "one"),
		Canary: plan.Canary{Tenants: 1, Then: plan.ThenApprove},
	})
	eventually(t, "the wave passed and waits", func() bool {
		v, err := h.svc.Plan(ctx, p.ID())
		return err == nil && v.Plan.Phase() == plan.PhaseAwaitingApproval
	})
	v, err := h.svc.Plan(ctx, p.ID())
	require.NoError(t, err)
	assert.Equal(t, plan.Running, v.Plan.Status())
	assert.Equal(t, 2, v.Progress.Counts[task.Pending], "the rest wait")
	assert.Equal(t, []string{"cp-000"}, ran())

	v, err = h.svc.ApprovePlan(ctx, p.ID())
	require.NoError(t, err)
	assert.Equal(t, plan.PhasePromoted, v.Plan.Phase())
	v = h.wait(t, p.ID())
	assert.Equal(t, plan.Completed, v.Plan.Status())
	assert.Len(t, ran(), 3)

	_, err = h.svc.ApprovePlan(ctx, p.ID())
	require.ErrorIs(t, err, plan.ErrInvalidTransition, "approved once")
}

func TestCanaryFailureHaltsThePlan(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	ran := h.startLog(t, "logged", "cf-001")
	ctx := context.Background()
	p := h.submit(t, app.SubmitRequest{
		Tenants: tenants("cf", 6), Stages: stages("logged", "one"),
		Canary: plan.Canary{Tenants: 2, Then: plan.ThenAuto},
	})
	var v app.PlanView
	eventually(t, "the plan halts at its canary", func() bool {
		var err error
		v, err = h.svc.Plan(ctx, p.ID())
		return err == nil && v.Plan.Phase() == plan.PhaseHalted && v.Progress.Counts[task.Failed] == 1 && v.Progress.Counts[task.Completed] == 1
	})
	assert.Equal(t, plan.Running, v.Plan.Status(), "halted, it waits for an operator")
	assert.Equal(t, 4, v.Progress.Counts[task.Pending], "nothing past the wave starts")
	assert.Contains(t, v.Plan.Ring().Halt, "cf-001", "the reason names the canary that failed")
	assert.ElementsMatch(t, []string{"cf-000", "cf-001"}, ran(), "no tenant past the wave ran")

	_, err := h.svc.RejectPlan(ctx, p.ID())
	require.NoError(t, err)
	v = h.wait(t, p.ID())
	assert.Equal(t, plan.Failed, v.Plan.Status())
	assert.Equal(t, 4, v.Progress.Counts[task.Cancelled])
	assert.ElementsMatch(t, []string{"cf-000", "cf-001"}, ran())
	rest := h.tenantTask(t, "cf-005")
	require.NotNil(t, rest.LastError())
	assert.Contains(t, rest.LastError().Message, "rejected")
}

func TestCanaryRejectedByTheOperator(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	ctx := context.Background()
	p := h.submit(t, app.SubmitRequest{
		Tenants: tenants("cr", 3), Stages: stages("noop", "one"),
		Canary: plan.Canary{Tenants: 1, Then: plan.ThenApprove},
	})
	eventually(t, "awaiting approval", func() bool {
		v, err := h.svc.Plan(ctx, p.ID())
		return err == nil && v.Plan.Phase() == plan.PhaseAwaitingApproval
	})
	_, err := h.svc.RejectPlan(ctx, p.ID())
	require.NoError(t, err)
	v := h.wait(t, p.ID())
	assert.Equal(t, plan.Cancelled, v.Plan.Status())
	assert.Equal(t, plan.PhaseHalted, v.Plan.Phase())
	assert.Equal(t, 1, v.Progress.Counts[task.Completed])
	assert.Equal(t, 2, v.Progress.Counts[task.Cancelled])
}

// A canary wave of one tenant that failed halts the plan with no task of the wave left to
// end: approve goes on all the same (the wave completes, its budget waived), the rest run.
func TestApprovingAHaltedWaveWhoseTasksAllEndedGoesOn(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	h.startLog(t, "logged", "ch-000")
	ctx := context.Background()
	p := h.submit(t, app.SubmitRequest{
		Tenants: tenants("ch", 3), Stages: stages("logged", "one"),
		Canary: plan.Canary{Tenants: 1, Then: plan.ThenAuto},
	})
	eventually(t, "the plan halts at its canary", func() bool {
		v, err := h.svc.Plan(ctx, p.ID())
		return err == nil && v.Plan.Phase() == plan.PhaseHalted && v.Progress.Counts[task.Failed] == 1
	})
	_, err := h.svc.ApprovePlan(ctx, p.ID())
	require.NoError(t, err)
	v := h.wait(t, p.ID())
	assert.Equal(t, plan.Failed, v.Plan.Status(), "the canary failed")
	assert.Equal(t, 2, v.Progress.Counts[task.Completed], "the rest ran")
}
