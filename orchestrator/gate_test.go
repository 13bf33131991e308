package orchestrator_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/errcode"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/stagekind"
)

// gated is [noop one, approval gate (asking msg), noop two].
func gated(msg string) []stage.Spec {
	s := stages("noop", "one", "gate", "two")
	s[1].Kind, s[1].Params = stagekind.KindApproval, map[string]any{"message": msg}
	return s
}

func TestApprovalGateWaitsWithoutWorkerOrLeaseThenFollowsTheDecision(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1) // one worker: a waiting task must give it back for the other to run
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("ap", 2), Stages: gated("check the dashboards")})
	ctx := context.Background()

	eventually(t, "both tasks wait at the gate", func() bool {
		return h.tenantStatus(t, "ap-000") == task.Waiting && h.tenantStatus(t, "ap-001") == task.Waiting
	})
	for _, tenant := range []string{"ap-000", "ap-001"} {
		tk := h.tenantTask(t, tenant)
		require.NotNil(t, tk.Wait())
		assert.Equal(t, task.Wait{StageIndex: 1, Stage: "gate", Reason: stagekind.ReasonApproval,
			Message: "check the dashboards", Since: tk.Wait().Since}, *tk.Wait())
		eventually(t, "a waiting task holds no lease", func() bool {
			_, held, err := h.locker.Holder(ctx, tenant)
			return err == nil && !held
		})
		v, err := h.svc.TenantTask(ctx, tenant)
		require.NoError(t, err)
		require.NotNil(t, v.Checkpoint)
		assert.Equal(t, []string{"one"}, v.Checkpoint.CompletedStages(), "the stages before the gate are checkpointed")
	}
	v, err := h.svc.Plan(ctx, p.ID())
	require.NoError(t, err)
	assert.Equal(t, plan.Running, v.Plan.Status(), "waiting tasks keep the plan running")
	assert.Equal(t, 2, v.Progress.Counts[task.Waiting])

	_, err = h.svc.ApproveTenant(ctx, "ap-000", "dashboards green")
	require.NoError(t, err)
	_, err = h.svc.RejectTenant(ctx, "ap-001", "error rate up")
	require.NoError(t, err)
	v = h.wait(t, p.ID())
	assert.Equal(t, plan.Failed, v.Plan.Status())

	ok := h.tenantTask(t, "ap-000")
	assert.Equal(t, task.Completed, ok.Status())
	assert.Equal(t, 1, ok.Attempt(), "a decision is not a retry")
	require.NotNil(t, ok.Verdict())
	assert.True(t, ok.Verdict().Approved)
	assert.Equal(t, "dashboards green", ok.Verdict().Comment)

	rejected := h.tenantTask(t, "ap-001")
	assert.Equal(t, task.Failed, rejected.Status())
	require.NotNil(t, rejected.LastError())
	assert.Equal(t, stage.ClassPermanent, rejected.LastError().Class)
	assert.Equal(t, "gate", rejected.LastError().Stage)
	assert.NotContains(t, rejected.LastError().Message, "error rate up", "the comment is on the decision, not in the logged failure")
	assert.Equal(t, "error rate up", rejected.Verdict().Comment)
	ledger := rejected.Ledger()
	require.NotEmpty(t, ledger)
	assert.Equal(t, "gate", ledger[len(ledger)-1].Stage, "the rejection is in the ledger")
	assert.Equal(t, task.OutcomeFailed, ledger[len(ledger)-1].Outcome)
}

func TestDecisionsOnlyForWaitingTasks(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("dn", 1), Stages: stages("noop", "one")})
	h.wait(t, p.ID())
	_, err := h.svc.ApproveTenant(context.Background(), "dn-000", "")
	require.ErrorIs(t, err, task.ErrInvalidTransition)
	_, err = h.svc.ApproveTenant(context.Background(), "dn-000", string(make([]byte, app.MaxCommentLength+1)))
	require.ErrorIs(t, err, app.ErrInvalidInput)
}

// Deciding on a task that runs on its way to its gate is refused, and the caller is told that
// only a WAITING task can be decided, and how to see when it waits.
func TestDecidingBeforeTheGateSaysToWaitForIt(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	release := make(chan struct{})
	h.register(t, "held", func(ctx context.Context, _ stage.Request) (json.RawMessage, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil, nil
	})
	s := gated("")
	s[0].Kind = "held"
	h.submit(t, app.SubmitRequest{Tenants: tenants("bg", 1), Stages: s})
	defer close(release)
	eventually(t, "running before its gate", func() bool { return h.tenantStatus(t, "bg-000") == task.Running })
	for _, decide := range []func(context.Context, string, string) (app.TaskView, error){h.svc.ApproveTenant, h.svc.RejectTenant} {
		_, err := decide(context.Background(), "bg-000", "")
		require.ErrorIs(t, err, task.ErrInvalidTransition)
		found, ok := errcode.Find(err, errcode.InvalidTransition)
		require.True(t, ok)
		assert.Equal(t, "task: cannot decide on a RUNNING task: only a task WAITING at a gate (an approval stage) can be "+
			"approved or rejected; this one has not reached its gate yet: wait until it does (its status then reads WAITING) "+
			"('executor status --tenant bg-000' shows its status)", errcode.Detail(err, found))
	}
}

func TestWaitingTaskCanBeCancelledAndRetriedAsksAgain(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("wc", 1), Stages: gated("")})
	ctx := context.Background()
	eventually(t, "waiting", func() bool { return h.tenantStatus(t, "wc-000") == task.Waiting })
	_, err := h.svc.RejectTenant(ctx, "wc-000", "no")
	require.NoError(t, err)
	h.wait(t, p.ID())
	require.Equal(t, task.Failed, h.tenantStatus(t, "wc-000"))

	// A retry from the checkpoint is a new run: it stops at the gate again.
	_, err = h.svc.RetryTenant(ctx, "wc-000", true)
	require.NoError(t, err)
	eventually(t, "waiting again", func() bool { return h.tenantStatus(t, "wc-000") == task.Waiting })
	assert.Nil(t, h.tenantTask(t, "wc-000").Decision(), "the earlier rejection does not count for the new run")

	v, err := h.svc.CancelPlan(ctx, p.ID())
	require.NoError(t, err)
	assert.Equal(t, plan.Cancelled, v.Plan.Status())
	assert.Equal(t, task.Cancelled, h.tenantStatus(t, "wc-000"))
}
