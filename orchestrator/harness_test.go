package orchestrator_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/orchestrator"
	"github.com/executor-dev/executor/stagekind"
)

// harness is an orchestrator on the in-memory store, with the app layer to submit plans.
type harness struct {
	svc    *app.Service
	orch   *orchestrator.Orchestrator
	kinds  *stagekind.Registry
	locker *lock.Memory
	db     *memrepo.DB
}

func newHarness(t *testing.T, workers int) *harness {
	t.Helper()
	return newHarnessWith(t, orchestrator.Config{Workers: workers})
}

// newHarnessWith is newHarness with the orchestrator configured by cfg (Rand fixed at 0.5).
func newHarnessWith(t *testing.T, cfg orchestrator.Config) *harness {
	t.Helper()
	db := memrepo.New()
	locker := lock.NewMemory()
	kinds := stagekind.Builtin(stagekind.HTTPOptions{})
	cfg.Rand = func() float64 { return 0.5 }
	svc, orch := apptest.New(t, apptest.Stores{
		Creator: db, Plans: db.Plans(), Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Locker: locker,
	}, kinds, cfg)
	return &harness{svc: svc, orch: orch, kinds: kinds, locker: locker, db: db}
}

func (h *harness) register(t *testing.T, kind string, fn stage.HandlerFunc) {
	t.Helper()
	require.NoError(t, h.kinds.Register(kind, fn))
}

func tenants(prefix string, n int) []app.TenantInput {
	out := make([]app.TenantInput, n)
	for i := range out {
		out[i] = app.TenantInput{ID: fmt.Sprintf("%s-%03d", prefix, i)}
	}
	return out
}

func stages(kind string, names ...string) []stage.Spec {
	out := make([]stage.Spec, len(names))
	for i, n := range names {
		out[i] = stage.Spec{Name: n, Kind: kind, Retry: stage.Policy{MaxAttempts: 1}}
	}
	return out
}

func (h *harness) submit(t *testing.T, req app.SubmitRequest) *plan.Plan {
	t.Helper()
	sub, err := h.svc.Submit(context.Background(), req)
	require.NoError(t, err)
	return sub.Plan.Plan
}

func (h *harness) wait(t *testing.T, planID string) app.PlanView {
	t.Helper()
	v, err := h.svc.WaitPlan(context.Background(), planID, 20*time.Second)
	require.NoError(t, err)
	require.True(t, v.Plan.Status().Terminal(), "plan still %s", v.Plan.Status())
	return v
}

// eventually polls cond every 5 ms for up to 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, 5*time.Millisecond, what)
}

func (h *harness) tenantTask(t *testing.T, tenant string) *task.Task {
	t.Helper()
	v, err := h.svc.TenantTask(context.Background(), tenant)
	require.NoError(t, err)
	return v.Task
}

func (h *harness) tenantStatus(t *testing.T, tenant string) task.Status {
	t.Helper()
	return h.tenantTask(t, tenant).Status()
}
