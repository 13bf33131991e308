package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/infra/dispatch"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/orchestrator"
	"github.com/executor-dev/executor/stagekind"
)

// gate registers kind as a stage that blocks until the returned func is called (or its run is
// cancelled).
func (h *harness) gate(t *testing.T, kind string) (open func()) {
	t.Helper()
	ch := make(chan struct{})
	h.register(t, kind, func(ctx context.Context, _ stage.Request) (json.RawMessage, error) {
		select {
		case <-ch:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	return func() { close(ch) }
}

func TestQueuedRisesWithWaitingTasksAndFallsAsTheyStart(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	open := h.gate(t, "gated")
	require.Equal(t, 0, h.orch.Queued())
	assert.Equal(t, 8, h.orch.Workers())

	a := h.submit(t, app.SubmitRequest{MaxConcurrency: 1, Tenants: tenants("qa", 5), Stages: stages("gated", "one")})
	b := h.submit(t, app.SubmitRequest{MaxConcurrency: 2, Tenants: tenants("qb", 3), Stages: stages("gated", "one")})
	// a runs 1 and queues 4; b runs 2 and queues 1.
	eventually(t, "5 tasks queued", func() bool { return h.orch.Queued() == 5 })

	open()
	assert.Equal(t, plan.Completed, h.wait(t, a.ID()).Plan.Status())
	assert.Equal(t, plan.Completed, h.wait(t, b.ID()).Plan.Status())
	assert.Equal(t, 0, h.orch.Queued())
}

func TestQueuedFallsWhenQueuedTasksAreCancelledOrDrained(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	h.gate(t, "gated") // never opened
	h.register(t, "fails", func(context.Context, stage.Request) (json.RawMessage, error) {
		return nil, stage.Permanent(errors.New("nope"))
	})

	cancelled := h.submit(t, app.SubmitRequest{MaxConcurrency: 1, Tenants: tenants("qc", 4), Stages: stages("gated", "one")})
	eventually(t, "3 tasks queued", func() bool { return h.orch.Queued() == 3 })
	_, err := h.svc.CancelPlan(context.Background(), cancelled.ID())
	require.NoError(t, err)
	assert.Equal(t, 0, h.orch.Queued(), "cancel drains the queue")

	// The first failure exhausts the budget: the queued rest is drained and cancelled.
	budget := h.submit(t, app.SubmitRequest{
		MaxConcurrency: 1, FailureBudget: 1, Tenants: tenants("qd", 6), Stages: stages("fails", "one"),
	})
	assert.Equal(t, plan.Failed, h.wait(t, budget.ID()).Plan.Status())
	assert.Equal(t, 0, h.orch.Queued())
}

func TestQueuedForgetsTasksAbandonedAtStop(t *testing.T) {
	t.Parallel()
	// Its own orchestrator, stopped by the test itself.
	db := memrepo.New()
	kinds := stagekind.Builtin(stagekind.HTTPOptions{})
	orch := orchestrator.New(db.Plans(), db.Tasks(), db.Checkpoints(), lock.NewMemory(), kinds, orchestrator.Config{Workers: 8, Queue: dispatch.ForMemory(dispatch.NewMemory(dispatch.MemoryOptions{}))})
	require.NoError(t, orch.Start(context.Background()))
	svc := app.New(app.Deps{
		Creator: db, Plans: db.Plans(), Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Index: db.Tasks(),
		Kinds: kinds, Holders: lock.NewMemory(), Launcher: orch, PlanControl: orch, TaskControl: orch, Reaper: orch, Watcher: orch, Unlocker: orch,
	})
	h := &harness{svc: svc, orch: orch, kinds: kinds, db: db}
	h.gate(t, "gated")
	h.submit(t, app.SubmitRequest{MaxConcurrency: 1, Tenants: tenants("qs", 4), Stages: stages("gated", "one")})
	eventually(t, "3 tasks queued", func() bool { return h.orch.Queued() == 3 })

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, orch.Stop(ctx))
	assert.Equal(t, 0, orch.Queued())
}
