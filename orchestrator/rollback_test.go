package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/orchestrator"
)

// callRecorder records every call of the "step" kind as "<tenant> <stage> <params.v>".
type callRecorder struct {
	mu    sync.Mutex
	calls []string
}

func (c *callRecorder) of(tenant string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, s := range c.calls {
		if rest, ok := strings.CutPrefix(s, tenant+" "); ok {
			out = append(out, rest)
		}
	}
	return out
}

// undoPlan is three "step" stages a, b, c: a and b have an undo reading their stage's output;
// c fails for the tenants in failing.
func undoPlan(h *harness, t *testing.T, rec *callRecorder, failing ...string) []stage.Spec {
	t.Helper()
	h.register(t, "step", func(_ context.Context, req stage.Request) (json.RawMessage, error) {
		rec.mu.Lock()
		rec.calls = append(rec.calls, fmt.Sprintf("%s %s %v", req.TenantID, req.Stage, req.Params["v"]))
		rec.mu.Unlock()
		if req.Stage == "c" && slices.Contains(failing, req.TenantID) {
			return nil, stage.Permanent(errors.New("c refused"))
		}
		return json.Marshal(map[string]string{"previous": req.TenantID + "-" + req.Stage + "-old"})
	})
	st := stages("step", "a", "b", "c")
	for _, i := range []int{0, 1} {
		st[i].Params = map[string]any{"v": "fwd"}
		st[i].Undo = &stage.Spec{Kind: "step", Params: map[string]any{"v": fmt.Sprintf(`{{index .Outputs %q "previous"}}`, st[i].Name)},
			Retry: stage.Policy{MaxAttempts: 1}}
	}
	return st
}

// With onFailure rollback, a task whose stage c fails undoes b then a (newest first), each
// undo reading its stage's output, as a new run; it ends ROLLED_BACK with c's failure as its
// last error. The tenants that did not fail complete, and no undo runs for them. The plan
// ends FAILED, and the metrics count the rollback.
func TestOnFailureRollbackUndoesTheCompletedStagesNewestFirst(t *testing.T) {
	t.Parallel()
	metrics := newRecordingMetrics()
	h := newMeasuredHarness(t, metrics)
	rec := &callRecorder{}
	st := undoPlan(h, t, rec, "rb-001")
	p := h.submit(t, app.SubmitRequest{Name: "rb", Stages: st, Tenants: tenants("rb", 3), OnFailure: plan.OnFailureRollback})
	v := h.wait(t, p.ID())
	assert.Equal(t, plan.Failed, v.Plan.Status())

	assert.Equal(t, []string{"a fwd", "b fwd", "c <nil>", "undo:b rb-001-b-old", "undo:a rb-001-a-old"}, rec.of("rb-001"))
	failed := h.tenantTask(t, "rb-001")
	assert.Equal(t, task.RolledBack, failed.Status())
	assert.Equal(t, 2, failed.Attempt(), "the rollback is a run of its own")
	require.NotNil(t, failed.LastError())
	assert.Equal(t, "c", failed.LastError().Stage)
	var undone []string
	for _, a := range failed.Ledger() {
		if a.Undo {
			undone = append(undone, a.Stage)
			assert.Equal(t, 2, a.Run)
		}
	}
	assert.Equal(t, []string{"b", "a"}, undone)
	for _, tn := range []string{"rb-000", "rb-002"} {
		assert.Equal(t, task.Completed, h.tenantStatus(t, tn))
		assert.Equal(t, []string{"a fwd", "b fwd", "c <nil>"}, rec.of(tn))
	}
	metrics.mu.Lock()
	assert.Equal(t, 1, metrics.rollbacks[orchestrator.TriggerOnFailure])
	metrics.mu.Unlock()
}

// An operator's rollback of a COMPLETED tenant reopens its plan and undoes every stage with
// an undo; a retry afterwards runs it forward again from the first stage.
func TestARollbackOfACompletedTenantThenARetryForward(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 4)
	rec := &callRecorder{}
	st := undoPlan(h, t, rec)
	p := h.submit(t, app.SubmitRequest{Name: "rb", Stages: st, Tenants: tenants("op", 1)})
	require.Equal(t, plan.Completed, h.wait(t, p.ID()).Plan.Status())

	v, err := h.svc.RollbackTenant(context.Background(), "op-000")
	require.NoError(t, err)
	assert.True(t, v.Task.RollingBack())
	eventually(t, "rolled back", func() bool { return h.tenantStatus(t, "op-000") == task.RolledBack })
	assert.Equal(t, []string{"a fwd", "b fwd", "c <nil>", "undo:b op-000-b-old", "undo:a op-000-a-old"}, rec.of("op-000"))
	cp, err := h.svc.TenantCheckpoint(context.Background(), "op-000")
	require.NoError(t, err)
	assert.Empty(t, cp.CompletedStages(), "every stage undone")
	assert.Equal(t, plan.Failed, h.wait(t, p.ID()).Plan.Status(), "a plan whose tenant was rolled back did not hold")

	_, err = h.svc.RollbackTenant(context.Background(), "op-000")
	require.ErrorIs(t, err, task.ErrInvalidTransition, "nothing left to undo")
	_, err = h.svc.RetryTenant(context.Background(), "op-000", true)
	require.NoError(t, err)
	eventually(t, "completed again", func() bool { return h.tenantStatus(t, "op-000") == task.Completed })
	assert.Len(t, rec.of("op-000"), 8, "a b c again, forward")
}

// With onFailure pause, the plan pauses once a task fails: the tasks not started stay
// PENDING until an operator resumes it.
func TestOnFailurePausePausesThePlan(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	h.register(t, "fails-first", func(_ context.Context, req stage.Request) (json.RawMessage, error) {
		if req.TenantID == "pz-000" {
			return nil, stage.Permanent(errors.New("broken"))
		}
		return nil, nil
	})
	p := h.submit(t, app.SubmitRequest{Name: "pz", MaxConcurrency: 1, Stages: stages("fails-first", "only"),
		Tenants: tenants("pz", 4), OnFailure: plan.OnFailurePause})
	eventually(t, "the plan paused", func() bool {
		v, err := h.svc.Plan(context.Background(), p.ID())
		return err == nil && v.Plan.Status() == plan.Paused
	})
	assert.Equal(t, task.Failed, h.tenantStatus(t, "pz-000"))
	assert.Equal(t, task.Pending, h.tenantStatus(t, "pz-003"), "nothing more started")
	_, err := h.svc.ResumePlan(context.Background(), p.ID(), false)
	require.NoError(t, err)
	assert.Equal(t, plan.Failed, h.wait(t, p.ID()).Plan.Status())
	assert.Equal(t, task.Completed, h.tenantStatus(t, "pz-003"))
}

// An operator's rollback of a RUNNING tenant never starts a second run: the run that holds
// the tenant turns back itself, at its next stage boundary (the stage under way completes,
// the next one never starts), or as its last stage completes; either way it undoes what it
// completed, newest first.
func TestARollbackOfARunningTenantIsMadeByItsOwnRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		held   int      // the stage under way when the rollback is asked
		wanted []string // the tenant's calls, in order
	}{
		{"at the next boundary", 1, []string{"a fwd", "b fwd", "undo:b rr-000-b-old", "undo:a rr-000-a-old"}},
		{"as the last stage completes", 2, []string{"a fwd", "b fwd", "c <nil>", "undo:b rr-000-b-old", "undo:a rr-000-a-old"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, 4)
			rec := &callRecorder{}
			st := undoPlan(h, t, rec)
			entered, open := make(chan struct{}), make(chan struct{})
			h.register(t, "held", func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
				rec.mu.Lock()
				rec.calls = append(rec.calls, fmt.Sprintf("%s %s %v", req.TenantID, req.Stage, req.Params["v"]))
				rec.mu.Unlock()
				close(entered)
				select {
				case <-open:
					return json.Marshal(map[string]string{"previous": req.TenantID + "-" + req.Stage + "-old"})
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			})
			st[tc.held].Kind = "held"
			p := h.submit(t, app.SubmitRequest{Name: "rr", Stages: st, Tenants: tenants("rr", 1)})
			<-entered
			v, err := h.svc.RollbackTenant(context.Background(), "rr-000")
			require.NoError(t, err)
			assert.Equal(t, task.Running, v.Task.Status(), "its run goes on until it can turn back")
			assert.True(t, v.Task.RollbackRequested())
			close(open)
			eventually(t, "rolled back", func() bool { return h.tenantStatus(t, "rr-000") == task.RolledBack })
			assert.Equal(t, tc.wanted, rec.of("rr-000"))
			got := h.tenantTask(t, "rr-000")
			assert.False(t, got.RollbackRequested())
			assert.Equal(t, 2, got.Attempt(), "one run forward, one back: no second run at once")
			assert.Equal(t, plan.Failed, h.wait(t, p.ID()).Plan.Status())
		})
	}
}
