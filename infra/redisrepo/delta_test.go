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
	"github.com/executor-dev/executor/domain/plan"
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

// Issue 14: nothing of an active plan expires, whatever its tasks do; the retention starts
// when the plan ends, for the plan, its tasks, their checkpoints and the tenant indexes that
// still point at them; a plan active again (a retry) takes it back.
func TestAPlansKeysLiveUntilItEndsThenForTheRetention(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := srv.Client()
	const retention = time.Hour
	store := redisrepo.New(client, redisrepo.Options{TTL: retention})
	ctx := context.Background()
	p, tasks := newPlan(t, "ret-1", "ret-2")
	require.NoError(t, store.CreatePlan(ctx, p, tasks))
	keys := rediskey.New("")
	planKeys := []string{keys.Plan(p.ID())}
	for _, tk := range tasks {
		planKeys = append(planKeys, keys.Task(tk.ID()), keys.Checkpoint(tk.ID()), keys.TenantIndex(tk.TenantID()))
	}
	requireTTLs := func(want time.Duration, step string) {
		t.Helper()
		for _, k := range planKeys {
			got, err := client.TTL(ctx, k).Result()
			require.NoError(t, err, step)
			if want < 0 {
				require.Equal(t, time.Duration(-1), got, "%s: %s has no TTL", step, k)
			} else {
				require.InDelta(t, want.Seconds(), got.Seconds(), 60, "%s: %s", step, k)
			}
		}
	}
	for range specs3 {
		runStage(t, store, tasks[0].ID())
	}
	runStage(t, store, tasks[1].ID()) // one task ended, one still running: the plan is active
	requireTTLs(-1, "while the plan is active")

	for range specs3[1:] {
		runStage(t, store, tasks[1].ID())
	}
	_, err := store.Plans().Update(ctx, p.ID(), func(p *plan.Plan) error {
		if err := p.Start(time.Now()); err != nil {
			return err
		}
		return p.Fail(time.Now())
	})
	require.NoError(t, err)
	requireTTLs(retention, "once the plan ended")

	_, err = store.Plans().Update(ctx, p.ID(), func(p *plan.Plan) error { return p.Reopen() })
	require.NoError(t, err)
	requireTTLs(-1, "a plan active again")

	// A tenant that moved on to a newer plan keeps that plan's index when the old one ends.
	_, err = store.Plans().Update(ctx, p.ID(), func(p *plan.Plan) error { return p.Fail(time.Now()) })
	require.NoError(t, err)
	newer, newerTasks := newPlan(t, "ret-1")
	require.NoError(t, store.CreatePlan(ctx, newer, newerTasks))
	_, err = store.Plans().Update(ctx, p.ID(), func(p *plan.Plan) error {
		if err := p.Reopen(); err != nil {
			return err
		}
		return p.Fail(time.Now())
	})
	require.NoError(t, err)
	got, err := client.TTL(ctx, keys.TenantIndex("ret-1")).Result()
	require.NoError(t, err)
	require.Equal(t, time.Duration(-1), got, "ret-1's index points at the newer, active plan's task")
}
