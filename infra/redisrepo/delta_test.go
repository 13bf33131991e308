package redisrepo_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/redistest"
)

// evalArgs records the argument count of every EVALSHA sent.
type evalArgs struct {
	mu   sync.Mutex
	last int
}

func (h *evalArgs) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *evalArgs) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "evalsha" {
			h.mu.Lock()
			h.last = len(cmd.Args())
			h.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}
func (h *evalArgs) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *evalArgs) lastCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}

// A run's writes send only the fields it changed, yet Redis always holds the whole task: a
// fresh executor (empty memory) reads back exactly the run's task after every write, also
// when a value goes back to one written before, and in the next run.
func TestRunWritesOnlyChangesYetRedisHoldsTheWholeTask(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := srv.Client()
	args := &evalArgs{}
	client.AddHook(args)
	store := redisrepo.New(client, redisrepo.Options{})
	ctx := context.Background()
	p, tasks := newPlan(t, "delta-1")
	require.NoError(t, store.CreatePlan(ctx, p, tasks))
	id := tasks[0].ID()

	requireStored := func(want *task.Task, step string) {
		t.Helper()
		got, err := redisrepo.New(client, redisrepo.Options{}).Tasks().Task(ctx, id)
		require.NoError(t, err, step)
		require.Equal(t, want.State(), got.State(), step)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	tick := func() time.Time { now = now.Add(time.Millisecond); return now }

	tk, err := store.Tasks().BumpFence(ctx, id)
	require.NoError(t, err)
	require.NoError(t, tk.Start(tk.Fence(), tick()))
	require.NoError(t, store.Tasks().Save(ctx, tk, nil))
	requireStored(tk, "started")

	cp := checkpoint.New(id)
	for i := range 2 {
		require.NoError(t, tk.Record(task.Attempt{StageIndex: i, Stage: specs3[i].Name, Run: 1, Attempt: 1,
			StartedAt: tick(), EndedAt: tick(), Outcome: task.OutcomeSucceeded}))
		require.NoError(t, tk.CompleteStage(i, tick()))
		require.NoError(t, cp.Record(i, specs3[i].Name, json.RawMessage(`{"i":1}`), tk.Fence(), tick()))
		require.NoError(t, store.Tasks().Save(ctx, tk, cp))
		requireStored(tk, "stage done")
		// EVALSHA sha 2 keys… fence ttl checkpoint version token refresh, then field pairs: the
		// stage, two times, the ledger's length and its new entry, not all of the task's ~17 fields.
		require.LessOrEqual(t, args.lastCount(), 11+2*5, "a stage transition sends only what changed")
	}

	require.NoError(t, tk.RequestPause(tick()))
	require.NoError(t, store.Tasks().Save(ctx, tk, nil))
	requireStored(tk, "pause requested")
	require.NoError(t, tk.Pause(tick()))
	require.NoError(t, store.Tasks().Save(ctx, tk, nil))
	requireStored(tk, "paused")
	require.NoError(t, tk.Resume(tick()))
	require.NoError(t, store.Tasks().Save(ctx, tk, nil))
	requireStored(tk, "resumed")

	// The next run: its writes start from the hash its fence bump returned.
	tk, err = store.Tasks().BumpFence(ctx, id)
	require.NoError(t, err)
	require.NoError(t, tk.Start(tk.Fence(), tick()))
	require.NoError(t, store.Tasks().Save(ctx, tk, nil))
	requireStored(tk, "second run started: status and pause request back to earlier values")
	require.NoError(t, tk.Record(task.Attempt{StageIndex: 2, Stage: specs3[2].Name, Run: 2, Attempt: 1,
		StartedAt: tick(), EndedAt: tick(), Outcome: task.OutcomeSucceeded}))
	require.NoError(t, tk.CompleteStage(2, tick()))
	require.NoError(t, tk.Complete(tick()))
	require.NoError(t, cp.Record(2, specs3[2].Name, nil, tk.Fence(), tick()))
	require.NoError(t, store.Tasks().Save(ctx, tk, cp))
	requireStored(tk, "completed")
}

// A running task's stage checkpoints leave its hash's TTL as it is (its start and heartbeats
// refresh it); every other write refreshes it, and every checkpoint gets the full TTL.
func TestStageCheckpointsLeaveTheTaskTTLToStartAndHeartbeats(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := srv.Client()
	const ttl = time.Hour
	store := redisrepo.New(client, redisrepo.Options{TTL: ttl})
	ctx := context.Background()
	p, tasks := newPlan(t, "ttl-1")
	require.NoError(t, store.CreatePlan(ctx, p, tasks))
	id := tasks[0].ID()
	taskKey, ckptKey := rediskey.New("").Task(id), rediskey.New("").Checkpoint(id)
	shorten := func() { // as if the last refresh were long ago
		t.Helper()
		require.NoError(t, client.Expire(ctx, taskKey, time.Minute).Err())
	}
	requireTTL := func(key string, refreshed bool, step string) {
		t.Helper()
		got, err := client.TTL(ctx, key).Result()
		require.NoError(t, err, step)
		if refreshed {
			require.Greater(t, got, ttl-time.Minute, step)
		} else {
			require.LessOrEqual(t, got, time.Minute, step)
		}
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	tick := func() time.Time { now = now.Add(time.Millisecond); return now }

	tk, err := store.Tasks().BumpFence(ctx, id)
	require.NoError(t, err)
	require.NoError(t, tk.Start(tk.Fence(), tick()))
	shorten()
	require.NoError(t, store.Tasks().Save(ctx, tk, nil))
	requireTTL(taskKey, true, "the start refreshes")

	cp := checkpoint.New(id)
	shorten()
	require.NoError(t, tk.Record(task.Attempt{StageIndex: 0, Stage: specs3[0].Name, Run: 1, Attempt: 1,
		StartedAt: tick(), EndedAt: tick(), Outcome: task.OutcomeSucceeded}))
	require.NoError(t, tk.CompleteStage(0, tick()))
	require.NoError(t, cp.Record(0, specs3[0].Name, nil, tk.Fence(), tick()))
	require.NoError(t, store.Tasks().Save(ctx, tk, cp))
	requireTTL(taskKey, false, "a stage checkpoint leaves the task's TTL")
	requireTTL(ckptKey, true, "the checkpoint has the full TTL")

	require.NoError(t, tk.Beat(tick()))
	require.NoError(t, store.Tasks().Save(ctx, tk, nil))
	requireTTL(taskKey, true, "a heartbeat refreshes")

	shorten()
	require.NoError(t, tk.Record(task.Attempt{StageIndex: 1, Stage: specs3[1].Name, Run: 1, Attempt: 1,
		StartedAt: tick(), EndedAt: tick(), Outcome: task.OutcomeFailed, Class: "permanent", Error: "no"}))
	require.NoError(t, tk.Fail(task.Failure{Stage: specs3[1].Name, Class: "permanent", Message: "no"}, tick()))
	require.NoError(t, store.Tasks().Save(ctx, tk, cp))
	requireTTL(taskKey, true, "the run's end refreshes, with a checkpoint too")
}
