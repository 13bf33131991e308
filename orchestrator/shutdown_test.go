package orchestrator_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/domain/errcode"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/orchestrator"
)

// stageCounter counts the runs of each stage of a "counted" kind whose stage "slow" waits for
// gate (or its context).
type stageCounter struct {
	mu   sync.Mutex
	runs map[string]int
	gate chan struct{}
}

func newStageCounter(h *harness, t *testing.T) *stageCounter {
	t.Helper()
	c := &stageCounter{runs: map[string]int{}, gate: make(chan struct{})}
	h.register(t, "counted", func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
		c.mu.Lock()
		c.runs[req.TenantID+"/"+req.Stage]++
		c.mu.Unlock()
		if req.Stage == "slow" {
			select {
			case <-c.gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return nil, nil
	})
	return c
}

func (c *stageCounter) count(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs[key]
}

// restart starts a second orchestrator over the harness's stores, as a restarted executor.
func (h *harness) restart(t *testing.T) *app.Service {
	t.Helper()
	svc, _ := apptest.New(t, apptest.Stores{
		Creator: h.db, Plans: h.db.Plans(), Tasks: h.db.Tasks(), Checkpoints: h.db.Checkpoints(), Locker: h.locker,
	}, h.kinds, orchestrator.Config{Workers: 8})
	return svc
}

func shutdown(t *testing.T, h *harness) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		done <- h.orch.Stop(ctx)
	}()
	eventually(t, "shutdown begun", h.orch.ShuttingDown)
	return done
}

func TestShutdownStopsRunsAtTheNextStageBoundary(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, orchestrator.Config{Workers: 8, StopGrace: time.Minute})
	c := newStageCounter(h, t)
	p := h.submit(t, app.SubmitRequest{
		MaxConcurrency: 1, Tenants: tenants("sd", 3), Stages: stages("counted", "one", "slow", "three"),
	})
	eventually(t, "slow stage running", func() bool { return c.count("sd-000/slow") == 1 })

	done := shutdown(t, h)
	// While it drains: queued tasks are already INTERRUPTED, no new work is taken.
	eventually(t, "queued tasks interrupted", func() bool { return h.tenantStatus(t, "sd-002") == task.Interrupted })
	_, err := h.svc.Submit(context.Background(), app.SubmitRequest{Tenants: tenants("late", 1), Stages: stages("noop", "a")})
	require.ErrorIs(t, err, errcode.ErrShuttingDown)
	_, err = h.svc.RetryTenant(context.Background(), "sd-002", true)
	require.ErrorIs(t, err, errcode.ErrShuttingDown)
	assert.Equal(t, task.Running, h.tenantStatus(t, "sd-000"), "the running stage is not cancelled before the timeout")

	close(c.gate) // the slow stage ends: the task stops before stage three
	require.NoError(t, <-done)

	tk := h.tenantTask(t, "sd-000")
	assert.Equal(t, task.Interrupted, tk.Status())
	assert.Equal(t, 2, tk.CurrentStage(), "stopped after slow, before three")
	require.NotNil(t, tk.LastError())
	assert.Equal(t, stage.ClassShutdown, tk.LastError().Class)
	assert.Equal(t, "three", tk.LastError().Stage)
	cp, err := h.svc.TenantCheckpoint(context.Background(), "sd-000")
	require.NoError(t, err)
	assert.Equal(t, 2, cp.Next(), "the checkpoint holds both completed stages")
	for _, tenant := range []string{"sd-001", "sd-002"} {
		tk := h.tenantTask(t, tenant)
		assert.Equal(t, task.Interrupted, tk.Status(), tenant)
		assert.Equal(t, 0, tk.CurrentStage(), tenant)
		require.NotNil(t, tk.LastError())
		assert.Equal(t, stage.ClassShutdown, tk.LastError().Class)
	}
	_, held, err := h.locker.Holder(context.Background(), "sd-000")
	require.NoError(t, err)
	assert.False(t, held, "the lease was released")
	v, err := h.svc.Plan(context.Background(), p.ID())
	require.NoError(t, err)
	assert.Equal(t, plan.Running, v.Plan.Status(), "a shutdown does not settle the plan")

	// After a restart an SRE retries each tenant from its checkpoint; nothing done re-runs.
	svc := h.restart(t)
	for _, tenant := range []string{"sd-000", "sd-001", "sd-002"} {
		_, err := svc.RetryTenant(context.Background(), tenant, true)
		require.NoError(t, err, tenant)
	}
	w, err := svc.WaitPlan(context.Background(), p.ID(), 20*time.Second)
	require.NoError(t, err)
	assert.Equal(t, plan.Completed, w.Plan.Status())
	assert.Equal(t, 1, c.count("sd-000/one"))
	assert.Equal(t, 1, c.count("sd-000/slow"))
	assert.Equal(t, 1, c.count("sd-000/three"))
	assert.Equal(t, 1, c.count("sd-002/one"))
}

func TestShutdownCancelsStagesAfterTheTimeout(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, orchestrator.Config{Workers: 8, StopGrace: 50 * time.Millisecond})
	c := newStageCounter(h, t)
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("st", 2), Stages: stages("counted", "one", "slow", "three")})
	eventually(t, "slow stages running", func() bool { return c.count("st-000/slow") == 1 && c.count("st-001/slow") == 1 })

	start := time.Now()
	require.NoError(t, <-shutdown(t, h))
	assert.Less(t, time.Since(start), 5*time.Second, "the stages were cancelled, not waited for")
	for _, tenant := range []string{"st-000", "st-001"} {
		tk := h.tenantTask(t, tenant)
		assert.Equal(t, task.Interrupted, tk.Status(), tenant)
		assert.Equal(t, 1, tk.CurrentStage(), "stage one done, slow cancelled")
		require.NotNil(t, tk.LastError())
		assert.Equal(t, stage.ClassShutdown, tk.LastError().Class)
		_, held, err := h.locker.Holder(context.Background(), tenant)
		require.NoError(t, err)
		assert.False(t, held, "the lease was released")
	}

	close(c.gate)
	svc := h.restart(t)
	_, err := svc.RetryTenant(context.Background(), "st-000", true)
	require.NoError(t, err)
	_, err = svc.RetryTenant(context.Background(), "st-001", true)
	require.NoError(t, err)
	w, err := svc.WaitPlan(context.Background(), p.ID(), 20*time.Second)
	require.NoError(t, err)
	assert.Equal(t, plan.Completed, w.Plan.Status())
	assert.Equal(t, 1, c.count("st-000/one"), "stage one is not re-run")
	assert.Equal(t, 2, c.count("st-000/slow"), "the cancelled stage runs again")
}
