package redisrepo_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/outage"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/infra/repotest"
)

// startBounded is one executor's store with a mirror caching cacheTasks tasks, started.
func startBounded(t *testing.T, client redis.UniversalClient, cacheTasks int) (*redisrepo.Store, *outage.Monitor) {
	t.Helper()
	mon := outage.NewMonitor(slog.New(slog.DiscardHandler))
	s := redisrepo.New(client, redisrepo.Options{Monitor: mon, Logger: slog.New(slog.DiscardHandler), CacheTasks: cacheTasks})
	require.NoError(t, s.Start(context.Background()))
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	return s, mon
}

// inMirror reports, for each task, whether the store's mirror holds it.
func inMirror(t *testing.T, s *redisrepo.Store, tasks []*task.Task) []bool {
	t.Helper()
	out := make([]bool, len(tasks))
	for i, tk := range tasks {
		_, err := s.Mirror().Tasks().Task(context.Background(), tk.ID())
		if err != nil {
			require.ErrorIs(t, err, task.ErrNotFound)
		}
		out[i] = err == nil
	}
	return out
}

// mirrored returns the mirror's copy of task id and its checkpoint.
func mirrored(t *testing.T, s *redisrepo.Store, id string) (*task.Task, *checkpoint.Checkpoint) {
	t.Helper()
	ctx := context.Background()
	tk, err := s.Mirror().Tasks().Task(ctx, id)
	require.NoError(t, err)
	cp, err := s.Mirror().Checkpoints().Checkpoint(ctx, id)
	require.NoError(t, err)
	return tk, cp
}

// Ended tasks the executor wrote leave the mirror beyond its cache; a read of one reads Redis
// and gets the very state it wrote: task, checkpoint, tenant index; an ended plan alike.
func TestBoundedMirrorReadsEvictedTasksFromRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	store, _ := startBounded(t, fastClient(t, srv.Addr()), 2)
	ctx := context.Background()
	p, tasks := newPlan(t, "ev1", "ev2", "ev3", "ev4", "ev5")
	require.NoError(t, store.CreatePlan(ctx, p, tasks))
	require.Equal(t, []bool{true, true, true, true, true}, inMirror(t, store, tasks), "accepted, not ended: kept")

	wrote := make([]*task.Task, len(tasks))
	wroteCp := make([]*checkpoint.Checkpoint, len(tasks))
	for i, tk := range tasks {
		for range specs3 {
			runStage(t, store, tk.ID())
		}
		wrote[i], wroteCp[i] = mirrored(t, store, tk.ID()) // the last write, as it was written
		require.Equal(t, task.Completed, wrote[i].Status())
	}
	assert.Equal(t, []bool{false, false, false, true, true}, inMirror(t, store, tasks), "ended: the 2 most recent cached")

	for i, tk := range tasks {
		got, err := store.Tasks().Task(ctx, tk.ID())
		require.NoError(t, err, tk.TenantID())
		assert.Equal(t, wrote[i].State(), got.State(), tk.TenantID())
		cp, err := store.Checkpoints().Checkpoint(ctx, tk.ID())
		require.NoError(t, err, tk.TenantID())
		assert.Equal(t, wroteCp[i].State(), cp.State(), tk.TenantID())
		latest, cp, err := store.Tasks().LatestWithCheckpoint(ctx, tk.TenantID())
		require.NoError(t, err, tk.TenantID())
		assert.Equal(t, wrote[i].State(), latest.State(), tk.TenantID())
		assert.Equal(t, wroteCp[i].State(), cp.State(), tk.TenantID())
	}
	_, counts := store.StatusCounts()
	assert.Equal(t, 2, counts[task.Completed], "reads are cached within the bound too")

	ended, err := store.Plans().Update(ctx, p.ID(), func(p *plan.Plan) error {
		if err := p.Start(time.Now()); err != nil {
			return err
		}
		return p.Complete(time.Now())
	})
	require.NoError(t, err)
	_, err = store.Mirror().Plans().Plan(ctx, p.ID())
	require.ErrorIs(t, err, plan.ErrNotFound, "ended and written: its 5 task ids weigh more than the cache")
	got, err := store.Plans().Plan(ctx, p.ID())
	require.NoError(t, err)
	assert.Equal(t, ended.State(), got.State())
}

// While Redis is away, what the executor runs or accepted and everything journaled stays in
// the mirror however small its cache; a plan's statuses still answer (its settling reads
// them). When Redis comes back empty, that is written back; ended tasks the mirror no longer
// held are not. Once written, the ended ones leave the mirror.
func TestBoundedMirrorKeepsActiveAndJournaledThroughAnOutage(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	store, mon := startBounded(t, fastClient(t, srv.Addr()), -1) // no cache
	ctx := context.Background()
	p, tasks := newPlan(t, "out1", "out2", "out3", "out4")
	require.NoError(t, store.CreatePlan(ctx, p, tasks))
	for range specs3 {
		runStage(t, store, tasks[0].ID())
		runStage(t, store, tasks[1].ID())
	}
	runStage(t, store, tasks[2].ID())
	require.Equal(t, []bool{false, false, true, true}, inMirror(t, store, tasks), "ended and written: gone; running, pending: kept")

	srv.Kill()
	runStage(t, store, tasks[2].ID()) // finds Redis away: degraded from here
	down, _ := mon.Degraded()
	require.True(t, down)
	runStage(t, store, tasks[2].ID()) // completes it: ended, but journaled
	during, more := newPlan(t, "out5")
	require.NoError(t, store.CreatePlan(ctx, during, more))
	all := append(append([]*task.Task{}, tasks...), more...)
	assert.Equal(t, []bool{false, false, true, true, true}, inMirror(t, store, all))
	statuses, err := store.Tasks().Statuses(ctx, p.TaskIDs())
	require.NoError(t, err, "a plan's statuses answer from memory")
	assert.Equal(t, []task.Status{task.Completed, task.Completed, task.Completed, task.Pending}, statuses)
	_, err = store.Tasks().Task(ctx, tasks[0].ID())
	require.ErrorIs(t, err, task.ErrNotFound, "an ended task outside the cache is not known while degraded")
	completed, _ := mirrored(t, store, tasks[2].ID())

	srv.Restart() // empty
	require.Eventually(t, func() bool { d, _ := mon.Degraded(); return !d && store.JournalLen() == 0 },
		10*time.Second, 20*time.Millisecond)
	assert.Equal(t, []bool{false, false, false, true, true}, inMirror(t, store, all), "written back: the ended one goes")

	fresh := redisrepo.New(srv.Client(), redisrepo.Options{})
	for _, want := range []*plan.Plan{p, during} {
		_, err := fresh.Plans().Plan(ctx, want.ID())
		require.NoError(t, err, "plans written back")
	}
	got, err := fresh.Tasks().Task(ctx, tasks[2].ID())
	require.NoError(t, err)
	assert.Equal(t, completed.State(), got.State(), "the journaled task, as the mirror held it")
	for _, tk := range append([]*task.Task{tasks[3]}, more...) {
		got, err := fresh.Tasks().Latest(ctx, tk.TenantID())
		require.NoError(t, err, tk.TenantID())
		assert.Equal(t, tk.ID(), got.ID())
		assert.Equal(t, task.Pending, got.Status())
	}
	for _, tk := range tasks[:2] {
		_, err := fresh.Tasks().Task(ctx, tk.ID())
		require.ErrorIs(t, err, task.ErrNotFound, "%s: ended and evicted before Redis lost its data: not restored", tk.TenantID())
	}
	got, err = store.Tasks().Task(ctx, tasks[2].ID())
	require.NoError(t, err, "a read after eviction reads Redis")
	assert.Equal(t, completed.State(), got.State())
}

// A plan this executor accepted that another executor ran to its end: once this executor
// reads the plan again (Refresh, on the other executor's signal; any read of the plan does),
// it knows that it ended, and its copies of the plan and its tasks (stale, as it accepted
// them) leave its mirror. A read of a plan the mirror holds reads every status field.
func TestBoundedMirrorLetsGoOfAPlanAnotherExecutorEnded(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	a, _ := startBounded(t, fastClient(t, srv.Addr()), -1)
	b, _ := startBounded(t, fastClient(t, srv.Addr()), -1)
	ctx := context.Background()
	p, tasks := newPlan(t, "else1", "else2")
	require.NoError(t, a.CreatePlan(ctx, p, tasks))
	_, err := a.Plans().Update(ctx, p.ID(), func(p *plan.Plan) error { return p.Start(time.Now()) })
	require.NoError(t, err)

	const reason = "executor x lost mid-plan; interrupted tenants: else1"
	_, err = b.Plans().Update(ctx, p.ID(), func(p *plan.Plan) error { return p.PauseFor(reason, time.Now()) })
	require.NoError(t, err)
	got, err := a.Plans().Plan(ctx, p.ID())
	require.NoError(t, err)
	assert.Equal(t, plan.Paused, got.Status())
	assert.Equal(t, reason, got.Reason(), "read from Redis, not from the mirror's copy")
	require.Equal(t, []bool{true, true}, inMirror(t, a, tasks), "a plan that has not ended: kept")

	for _, tk := range tasks {
		for range specs3 {
			runStage(t, b, tk.ID())
		}
	}
	_, err = b.Plans().Update(ctx, p.ID(), func(p *plan.Plan) error {
		if err := p.Resume(); err != nil {
			return err
		}
		return p.Complete(time.Now())
	})
	require.NoError(t, err)
	require.Equal(t, []bool{true, true}, inMirror(t, a, tasks), "A knows nothing of it yet")

	a.Plans().Refresh(ctx, p.ID()) // what B's signal of the plan's end makes A's orchestrator do
	assert.Equal(t, []bool{false, false}, inMirror(t, a, tasks), "the plan ended: A's copies of its tasks are stale")
	_, err = a.Mirror().Plans().Plan(ctx, p.ID())
	require.ErrorIs(t, err, plan.ErrNotFound, "ended: only cached, and there is no cache")
	got, err = a.Plans().Plan(ctx, p.ID())
	require.NoError(t, err)
	assert.Equal(t, plan.Completed, got.Status(), "read from Redis")
	for _, tk := range tasks {
		got, err := a.Tasks().Task(ctx, tk.ID())
		require.NoError(t, err)
		assert.Equal(t, task.Completed, got.Status(), "read from Redis")
	}
}

// The repository contract holds with no cache at all: every read that is not of a task or
// plan the store keeps goes to Redis.
func TestContractWithoutCache(t *testing.T) {
	srv := redistest.Start(t)
	client := srv.Client()
	var n atomic.Int64
	repotest.Run(t, func(t *testing.T) repotest.Store {
		s := redisrepo.New(client, redisrepo.Options{Keys: rediskey.New(fmt.Sprintf("nc%d:", n.Add(1))), CacheTasks: -1})
		return repotest.Store{Creator: s, Plans: s.Plans(), Tasks: s.Tasks(), Checkpoints: s.Checkpoints(), Index: s.Tasks(), Transcripts: s.Transcripts(), Audit: s.Audit()}
	})
}
