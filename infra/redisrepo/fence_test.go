package redisrepo_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/redistest"
)

// raw reads a task's hash and (when withCheckpoint) checkpoint exactly as Redis stores them.
func raw(t *testing.T, srv *redistest.Server, taskID string, withCheckpoint bool) (map[string]string, string) {
	t.Helper()
	c := srv.Client()
	keys := rediskey.New("")
	h, err := c.HGetAll(context.Background(), keys.Task(taskID)).Result()
	require.NoError(t, err)
	if !withCheckpoint {
		return h, ""
	}
	cp, err := c.Get(context.Background(), keys.Checkpoint(taskID)).Result()
	require.NoError(t, err)
	return h, cp
}

// Two runners of one task in two processes (two stores, each with its own mirror): once the
// newer run took the lease and bumped the epoch, the older one's next write is refused and
// changes nothing: the stored task and checkpoint stay byte-identical to the newer run's.
func TestSupersededRunnerIsFenced(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	specs := []stage.Spec{{Name: "push", Kind: "noop"}, {Name: "restart", Kind: "noop"}, {Name: "health", Kind: "noop"}}

	procA := redisrepo.New(srv.Client(), redisrepo.Options{})
	procB := redisrepo.New(srv.Client(), redisrepo.Options{})
	tk, err := task.New(ulid.Make().String(), "fenced-1", map[string]any{"v": "1"}, specs, now)
	require.NoError(t, err)
	p, err := plan.New(plan.Draft{ID: tk.PlanID(), Stages: specs, TaskIDs: []string{tk.ID()}}, now)
	require.NoError(t, err)
	require.NoError(t, procA.Plans().Create(ctx, p))
	require.NoError(t, procA.Tasks().Create(ctx, []*task.Task{tk}))

	// Run A takes the task (epoch 1) and completes stage 0.
	epochATask, err := procA.Tasks().BumpFence(ctx, tk.ID())
	require.NoError(t, err)
	epochA := epochATask.Fence()
	runA, err := procA.Tasks().Task(ctx, tk.ID())
	require.NoError(t, err)
	require.NoError(t, runA.Start(epochA, now))
	cpA := checkpoint.New(tk.ID())
	require.NoError(t, runA.CompleteStage(0, now))
	require.NoError(t, cpA.Record(0, "push", json.RawMessage(`{"by":"A"}`), epochA, now))
	require.NoError(t, procA.Tasks().Save(ctx, runA, cpA))

	// A stalls; process B finds it gone, takes it over (epoch 2), interrupts, retries (epoch 3)
	// and completes stage 1.
	epochBTask, err := procB.Tasks().BumpFence(ctx, tk.ID())
	require.NoError(t, err)
	epochB := epochBTask.Fence()
	runB, err := procB.Tasks().Task(ctx, tk.ID())
	require.NoError(t, err)
	require.NoError(t, runB.Abandon(epochB, task.Failure{Class: stage.ClassLeaseLost, Message: "owner lost"}, now))
	require.NoError(t, procB.Tasks().Save(ctx, runB, nil))
	require.NoError(t, runB.Retry(1, now))
	require.NoError(t, procB.Tasks().Save(ctx, runB, nil))
	epochBTask, err = procB.Tasks().BumpFence(ctx, tk.ID())
	require.NoError(t, err)
	epochB = epochBTask.Fence()
	runB, err = procB.Tasks().Task(ctx, tk.ID())
	require.NoError(t, err)
	require.NoError(t, runB.Start(epochB, now.Add(time.Second)))
	cpB, err := procB.Checkpoints().Checkpoint(ctx, tk.ID())
	require.NoError(t, err)
	require.NoError(t, runB.CompleteStage(1, now.Add(time.Second)))
	require.NoError(t, cpB.Record(1, "restart", json.RawMessage(`{"by":"B"}`), epochB, now.Add(time.Second)))
	require.NoError(t, procB.Tasks().Save(ctx, runB, cpB))
	wantHash, wantCkpt := raw(t, srv, tk.ID(), true)

	// A wakes up and writes its stage 1, with and without a checkpoint: both refused.
	require.NoError(t, runA.CompleteStage(1, now.Add(2*time.Second)))
	require.NoError(t, cpA.Record(1, "restart", json.RawMessage(`{"by":"A"}`), epochA, now.Add(2*time.Second)))
	require.ErrorIs(t, procA.Tasks().Save(ctx, runA, cpA), task.ErrFenced)
	require.ErrorIs(t, procA.Tasks().Save(ctx, runA, nil), task.ErrFenced)

	gotHash, gotCkpt := raw(t, srv, tk.ID(), true)
	assert.Equal(t, wantHash, gotHash, "the task hash is byte-identical to the newer run's")
	assert.Equal(t, wantCkpt, gotCkpt, "the checkpoint is byte-identical to the newer run's")
	assert.Equal(t, "3", gotHash["fence"])

	// A's process, fenced, forgot its stale copy: it now reads B's state.
	seen, err := procA.Tasks().Task(ctx, tk.ID())
	require.NoError(t, err)
	assert.Equal(t, 2, seen.CurrentStage())
	assert.Equal(t, 2, seen.Attempt())
}

// A write delayed in the network past its client's timeout may reach Redis after a later
// write of the same run (written back after the outage it caused): it is at an older version,
// so the compare-and-set refuses it and it changes nothing.
func TestDelayedOlderWriteOfTheSameRunChangesNothing(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	store := redisrepo.New(srv.Client(), redisrepo.Options{})
	now := time.Now().UTC().Truncate(time.Millisecond)
	specs := []stage.Spec{{Name: "one", Kind: "noop"}, {Name: "two", Kind: "noop"}}
	tk, err := task.New(ulid.Make().String(), "delayed-1", nil, specs, now)
	require.NoError(t, err)
	p, err := plan.New(plan.Draft{ID: tk.PlanID(), Stages: specs, TaskIDs: []string{tk.ID()}}, now)
	require.NoError(t, err)
	require.NoError(t, store.CreatePlan(ctx, p, []*task.Task{tk}))
	run, err := store.Tasks().BumpFence(ctx, tk.ID())
	require.NoError(t, err)
	require.NoError(t, run.Start(run.Fence(), now.Add(time.Second)))
	older, err := task.Load(run.State()) // the write that will arrive late: RUNNING at stage 0
	require.NoError(t, err)
	require.NoError(t, run.CompleteStage(0, now.Add(2*time.Second)))
	require.NoError(t, run.CompleteStage(1, now.Add(3*time.Second)))
	require.NoError(t, run.Complete(now.Add(3*time.Second)))
	require.NoError(t, store.Tasks().Save(ctx, run, nil))
	want, _ := raw(t, srv, tk.ID(), false)

	require.ErrorIs(t, store.Tasks().Save(ctx, older, nil), task.ErrConflict, "a write from an older version")
	got, _ := raw(t, srv, tk.ID(), false)
	assert.Equal(t, want, got)
	assert.Equal(t, "COMPLETED", got["status"])
}
