package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/orchestrator"
)

// A stage's progress is saved with the task's checkpoint: the stage's next attempt in the run,
// and a retry from the checkpoint, go on from it; a retry from the start forgets it, and so
// does the stage's completion.
func TestStageProgressOutlivesItsRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	var (
		mu    sync.Mutex
		seen  []string // what each attempt found saved: run/attempt=progress
		fails = 2      // attempts that fail after saving
	)
	h.register(t, "steps", func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, string(req.SavedProgress()))
		if fails > 0 {
			fails--
			if err := req.SaveProgress(ctx, json.RawMessage(`{"started":"deploy-1"}`)); err != nil {
				return nil, err
			}
			return nil, stage.Permanent(errors.New("the deploy went away"))
		}
		return json.RawMessage(`{"done":true}`), nil
	})
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("pg", 1), Stages: []stage.Spec{
		{Name: "first", Kind: "noop", Retry: stage.Policy{MaxAttempts: 1}},
		{Name: "deploy", Kind: "steps", Retry: stage.Policy{MaxAttempts: 1}},
	}})
	require.Equal(t, plan.Failed, h.wait(t, p.ID()).Plan.Status())
	tk := h.tenantTask(t, "pg-000")
	cp, err := h.db.Checkpoints().Checkpoint(context.Background(), tk.ID())
	require.NoError(t, err)
	assert.JSONEq(t, `{"started":"deploy-1"}`, string(cp.Progress("deploy")), "the failed run's progress is in the checkpoint")

	_, err = h.svc.RetryTenant(context.Background(), "pg-000", true) // from the checkpoint: goes on from the progress
	require.NoError(t, err)
	require.Equal(t, plan.Failed, h.wait(t, p.ID()).Plan.Status())
	_, err = h.svc.RetryTenant(context.Background(), "pg-000", false) // from the start: forgets it
	require.NoError(t, err)
	require.Equal(t, plan.Completed, h.wait(t, p.ID()).Plan.Status())
	require.Equal(t, task.Completed, h.tenantStatus(t, "pg-000"))

	mu.Lock()
	assert.Equal(t, []string{"", `{"started":"deploy-1"}`, ""}, seen)
	mu.Unlock()
	cp, err = h.db.Checkpoints().Checkpoint(context.Background(), tk.ID())
	require.NoError(t, err)
	assert.Nil(t, cp.Progress("deploy"), "a completed stage keeps no progress")
	assert.Equal(t, []string{"first", "deploy"}, cp.CompletedStages())
}

// The progress of stage 0 is read back by a retry too (a task's first run never has any).
func TestStageZeroProgressIsResumed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	var (
		mu   sync.Mutex
		seen []string
	)
	h.register(t, "once", func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, string(req.SavedProgress()))
		if req.SavedProgress() == nil {
			require.NoError(t, req.SaveProgress(ctx, json.RawMessage(`{"id":7}`)))
			return nil, stage.Permanent(errors.New("cut"))
		}
		return nil, nil
	})
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("pz", 1), Stages: stages("once", "only")})
	require.Equal(t, plan.Failed, h.wait(t, p.ID()).Plan.Status())
	_, err := h.svc.RetryTenant(context.Background(), "pz-000", true)
	require.NoError(t, err)
	require.Equal(t, plan.Completed, h.wait(t, p.ID()).Plan.Status())
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"", `{"id":7}`}, seen)
}

// Progress lives in the checkpoint as an output does, and is bounded as one: a larger one
// fails the attempt permanently, and nothing is saved.
func TestStageProgressIsBounded(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, orchestrator.Config{MaxOutputBytes: 64})
	h.register(t, "big", func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
		return nil, req.SaveProgress(ctx, json.RawMessage(`{"v":"`+strings.Repeat("x", 100)+`"}`))
	})
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("pb", 1), Stages: stages("big", "only")})
	require.Equal(t, plan.Failed, h.wait(t, p.ID()).Plan.Status())
	tk := h.tenantTask(t, "pb-000")
	require.NotNil(t, tk.LastError())
	assert.Equal(t, stage.ClassPermanent, tk.LastError().Class)
	assert.Contains(t, tk.LastError().Message, "--max-output-bytes")
	_, err := h.db.Checkpoints().Checkpoint(context.Background(), tk.ID())
	require.ErrorIs(t, err, checkpoint.ErrNotFound, "nothing was saved")
}
