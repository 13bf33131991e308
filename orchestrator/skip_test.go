package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// A plan whose one failed tenant an operator skips completes "with exceptions": the skip
// reopens the FAILED plan and settles it again; a RUNNING tenant cannot be skipped.
func TestSkipTheFailedTenantCompletesThePlan(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 4)
	gate := make(chan struct{})
	h.register(t, "sk", func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
		switch req.TenantID {
		case "sk-000":
			return nil, stage.Permanent(errors.New("broken tenant"))
		case "sk-002":
			<-gate
		}
		return nil, nil
	})
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("sk", 3), Stages: stages("sk", "one")})
	eventually(t, "sk-002 running", func() bool { return h.tenantStatus(t, "sk-002") == task.Running })
	_, err := h.svc.SkipTenant(context.Background(), "sk-002", "")
	require.ErrorIs(t, err, task.ErrInvalidTransition, "a RUNNING task is not skipped")
	close(gate)
	v := h.wait(t, p.ID())
	require.Equal(t, plan.Failed, v.Plan.Status())
	assert.Equal(t, app.OutcomeFailed, v.Outcome())

	tv, err := h.svc.SkipTenant(context.Background(), "sk-000", "decommissioned")
	require.NoError(t, err)
	assert.Equal(t, task.Skipped, tv.Task.Status())
	v = h.wait(t, p.ID())
	assert.Equal(t, plan.Completed, v.Plan.Status(), "the skipped tenant was all that failed the plan")
	assert.Equal(t, app.OutcomeDoneExceptions, v.Outcome())
	assert.Equal(t, 1, v.Progress.Counts[task.Skipped])
	assert.Equal(t, 2, v.Progress.Counts[task.Completed])

	_, err = h.svc.SkipTenant(context.Background(), "sk-001", "")
	require.ErrorIs(t, err, task.ErrInvalidTransition, "a COMPLETED task is not skipped")

	_, err = h.svc.RetryTenant(context.Background(), "sk-000", true)
	require.NoError(t, err, "a skipped tenant is retried: its COMPLETED plan reopens")
	assert.Equal(t, plan.Failed, h.wait(t, p.ID()).Plan.Status(), "it fails again, and so does its plan")
}

// A tenant cancelled one by one does not make its plan of completed tenants CANCELLED: it
// completes with exceptions; a plan none of whose tenants completed is CANCELLED.
func TestCancelledTenantLeavesThePlanCompletedWithExceptions(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 4)
	gate := make(chan struct{})
	h.register(t, "ce", func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
		if req.TenantID == "ce-001" {
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return nil, nil
	})
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("ce", 3), Stages: stages("ce", "one")})
	eventually(t, "ce-001 running", func() bool { return h.tenantStatus(t, "ce-001") == task.Running })
	_, err := h.svc.CancelTenant(context.Background(), "ce-001")
	require.NoError(t, err)
	v := h.wait(t, p.ID())
	assert.Equal(t, plan.Completed, v.Plan.Status())
	assert.Equal(t, app.OutcomeDoneExceptions, v.Outcome())
	assert.Equal(t, 1, v.Exceptions())
}

// plan resume resumes the tasks its pause paused and leaves a tenant paused on its own
// paused; with all, that one too.
func TestPlanResumeLeavesTenantsPausedOneByOne(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 4)
	gate := make(chan struct{})
	h.register(t, "pr", func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
		if req.Stage == "one" {
			<-gate
		}
		return nil, nil
	})
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("pr", 2), Stages: stages("pr", "one", "two")})
	eventually(t, "both running", func() bool {
		return h.tenantStatus(t, "pr-000") == task.Running && h.tenantStatus(t, "pr-001") == task.Running
	})
	_, err := h.svc.PauseTenant(context.Background(), "pr-000")
	require.NoError(t, err)
	_, err = h.svc.PausePlan(context.Background(), p.ID())
	require.NoError(t, err)
	close(gate)
	eventually(t, "both paused", func() bool {
		return h.tenantStatus(t, "pr-000") == task.Paused && h.tenantStatus(t, "pr-001") == task.Paused
	})
	assert.False(t, h.tenantTask(t, "pr-000").PausedByPlan(), "paused for its tenant")
	assert.True(t, h.tenantTask(t, "pr-001").PausedByPlan(), "paused by its plan")

	_, err = h.svc.ResumePlan(context.Background(), p.ID(), false)
	require.NoError(t, err)
	eventually(t, "the plan's pause undone", func() bool { return h.tenantStatus(t, "pr-001") == task.Completed })
	assert.Equal(t, task.Paused, h.tenantStatus(t, "pr-000"), "a tenant paused one by one stays paused")

	_, err = h.svc.ResumePlan(context.Background(), p.ID(), true)
	require.NoError(t, err, "a RUNNING plan's resume --all resumes its tenants paused one by one")
	assert.Equal(t, plan.Completed, h.wait(t, p.ID()).Plan.Status(), "--all resumed it too")
}

// A FAILED plan with a failure left is not reopened by a skip: it stays FAILED as it ended
// (no second end, no second plan.ended notice); the skip of its last failure completes it.
func TestSkipReopensAFailedPlanOnlyAtItsLastFailure(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 4)
	h.register(t, "sl", func(_ context.Context, req stage.Request) (json.RawMessage, error) {
		if req.TenantID != "sl-002" {
			return nil, stage.Permanent(errors.New("broken tenant"))
		}
		return nil, nil
	})
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("sl", 3), Stages: stages("sl", "one")})
	ended := h.wait(t, p.ID()).Plan
	require.Equal(t, plan.Failed, ended.Status())

	_, err := h.svc.SkipTenant(context.Background(), "sl-000", "")
	require.NoError(t, err)
	v, err := h.svc.Plan(context.Background(), p.ID())
	require.NoError(t, err)
	assert.Equal(t, plan.Failed, v.Plan.Status(), "sl-001 still failed")
	assert.Equal(t, ended.FinishedAt(), v.Plan.FinishedAt(), "not reopened: it ended once")
	assert.Equal(t, ended.Version(), v.Plan.Version(), "not written")

	_, err = h.svc.SkipTenant(context.Background(), "sl-001", "")
	require.NoError(t, err)
	v = h.wait(t, p.ID())
	assert.Equal(t, plan.Completed, v.Plan.Status())
	assert.Equal(t, app.OutcomeDoneExceptions, v.Outcome())
}
