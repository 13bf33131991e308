package redisrepo_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/outage"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/redistest"
)

// fastClient fails fast when Redis is away, as the executor's own client does.
func fastClient(t *testing.T, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 200 * time.Millisecond,
		ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond, PoolTimeout: 200 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// startStore is one executor's store, started (probe running) and stopped when t ends.
func startStore(t *testing.T, client redis.UniversalClient, onConflict func(string)) (*redisrepo.Store, *outage.Monitor) {
	t.Helper()
	mon := outage.NewMonitor(slog.New(slog.DiscardHandler))
	s := redisrepo.New(client, redisrepo.Options{Monitor: mon, Logger: slog.New(slog.DiscardHandler), OnConflict: onConflict})
	require.NoError(t, s.Start(context.Background()))
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	return s, mon
}

var specs3 = []stage.Spec{{Name: "push", Kind: "noop"}, {Name: "restart", Kind: "noop"}, {Name: "health", Kind: "noop"}}

// newPlan makes a plan for tenants, not stored.
func newPlan(t *testing.T, tenants ...string) (*plan.Plan, []*task.Task) {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Millisecond)
	planID := ulid.Make().String()
	var tasks []*task.Task
	var ids []string
	for _, tn := range tenants {
		tk, err := task.New(planID, tn, map[string]any{"v": tn}, specs3, now)
		require.NoError(t, err)
		tasks = append(tasks, tk)
		ids = append(ids, tk.ID())
	}
	p, err := plan.New(plan.Draft{ID: planID, Name: "degraded", Stages: specs3, TaskIDs: ids}, now)
	require.NoError(t, err)
	return p, tasks
}

// runStage starts tk (if PENDING) and completes its next stage, saving task and checkpoint.
func runStage(t *testing.T, s *redisrepo.Store, id string) {
	t.Helper()
	ctx := context.Background()
	tk, err := s.Tasks().Task(ctx, id)
	require.NoError(t, err)
	if tk.Status() == task.Pending {
		tk, err = s.Tasks().BumpFence(ctx, id)
		require.NoError(t, err)
		require.NoError(t, tk.Start(tk.Fence(), time.Now()))
	}
	cp, err := s.Checkpoints().Checkpoint(ctx, id)
	if err != nil {
		cp = checkpoint.New(id)
	}
	i := tk.CurrentStage()
	require.NoError(t, tk.CompleteStage(i, time.Now()))
	require.NoError(t, cp.Record(i, specs3[i].Name, json.RawMessage(`{"stage":"`+specs3[i].Name+`"}`), tk.Fence(), time.Now()))
	if tk.CurrentStage() == len(specs3) {
		require.NoError(t, tk.Complete(time.Now()))
	}
	require.NoError(t, s.Tasks().Save(ctx, tk, cp))
}

func TestDegradedWritesAreWrittenBackToAnEmptyRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	store, mon := startStore(t, fastClient(t, srv.Addr()), nil)
	ctx := context.Background()

	before, tasks := newPlan(t, "d1", "d2", "d3")
	require.NoError(t, store.CreatePlan(ctx, before, tasks))
	runStage(t, store, tasks[0].ID())

	srv.Kill()
	runStage(t, store, tasks[0].ID()) // the first write finds Redis away: degraded from here
	down, _ := mon.Degraded()
	require.True(t, down)
	runStage(t, store, tasks[0].ID()) // completes it
	runStage(t, store, tasks[1].ID())
	during, more := newPlan(t, "d4")
	require.NoError(t, store.CreatePlan(ctx, during, more), "new plans are accepted on memory")
	assert.Positive(t, store.JournalLen())

	got, err := store.Tasks().Task(ctx, tasks[0].ID())
	require.NoError(t, err, "queries answer from memory")
	assert.Equal(t, task.Completed, got.Status())

	srv.Restart() // empty: it kept nothing
	require.Eventually(t, func() bool { d, _ := mon.Degraded(); return !d }, 10*time.Second, 20*time.Millisecond)
	assert.Zero(t, store.JournalLen())

	// A fresh executor (its own empty mirror) reads everything back from Redis, equal to what
	// the degraded one holds: plans, tasks, checkpoints, indexes.
	fresh := redisrepo.New(srv.Client(), redisrepo.Options{})
	for _, p := range []*plan.Plan{before, during} {
		want, err := store.Plans().Plan(ctx, p.ID())
		require.NoError(t, err)
		got, err := fresh.Plans().Plan(ctx, p.ID())
		require.NoError(t, err)
		assert.Equal(t, want.State(), got.State())
	}
	for _, tk := range append(tasks, more...) {
		want, err := store.Tasks().Task(ctx, tk.ID())
		require.NoError(t, err)
		got, err := fresh.Tasks().Latest(ctx, tk.TenantID())
		require.NoError(t, err, tk.TenantID())
		wantJSON, _ := json.Marshal(want.State())
		gotJSON, _ := json.Marshal(got.State())
		assert.JSONEq(t, string(wantJSON), string(gotJSON), tk.TenantID())
		wantCp, err := store.Checkpoints().Checkpoint(ctx, tk.ID())
		if err == nil {
			gotCp, err := fresh.Checkpoints().Checkpoint(ctx, tk.ID())
			require.NoError(t, err)
			assert.Equal(t, wantCp.CompletedStages(), gotCp.CompletedStages())
		}
	}
	listed, err := srv.Client().ZRangeArgs(ctx, redis.ZRangeArgs{Key: rediskey.New("").Plans(), Start: 0, Stop: -1, Rev: true}).Result()
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{before.ID(), during.ID()}, listed)

	// The tenants' claims came back too: d2 (still running) is held, d1 (completed) is free.
	// New claims wait one lease TTL after the loss.
	keys := rediskey.New("")
	assert.Equal(t, tasks[1].ID(), srv.Client().Get(ctx, keys.TenantActive("d2")).Val())
	assert.Zero(t, srv.Client().Exists(ctx, keys.TenantActive("d1")).Val())
	again, dup := newPlan(t, "d2")
	require.ErrorIs(t, fresh.CreatePlan(ctx, again, dup), task.ErrClaimsPaused)
}

func TestWriteBackConflictKeepsTheOtherExecutorsState(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	proxy := srv.NewProxy()
	conflicts := make(chan string, 4)
	a, monA := startStore(t, fastClient(t, proxy.Addr()), func(id string) { conflicts <- id })
	b, _ := startStore(t, fastClient(t, srv.Addr()), nil)
	ctx := context.Background()

	p, tasks := newPlan(t, "c1")
	require.NoError(t, a.CreatePlan(ctx, p, tasks))
	id := tasks[0].ID()
	runStage(t, a, id) // A runs c1 (epoch 1)

	proxy.Cut() // A alone loses Redis
	runStage(t, a, id)
	down, _ := monA.Degraded()
	require.True(t, down)

	// Meanwhile B finds the run gone, takes the task over and runs it on.
	taken, err := b.Tasks().BumpFence(ctx, id)
	require.NoError(t, err)
	require.NoError(t, taken.Abandon(taken.Fence(), task.Failure{Class: stage.ClassLeaseLost, Message: "owner lost"}, time.Now()))
	require.NoError(t, b.Tasks().Save(ctx, taken, nil))
	require.NoError(t, taken.Retry(1, time.Now()))
	require.NoError(t, b.Tasks().Save(ctx, taken, nil))
	runStage(t, b, id)
	keys := rediskey.New("")
	wantHash, err := srv.Client().HGetAll(ctx, keys.Task(id)).Result()
	require.NoError(t, err)
	wantCkpt, err := srv.Client().Get(ctx, keys.Checkpoint(id)).Result()
	require.NoError(t, err)

	proxy.Restore()
	select {
	case got := <-conflicts:
		assert.Equal(t, id, got, "A is told to stop its run")
	case <-time.After(10 * time.Second):
		t.Fatal("no conflict reported")
	}
	require.Eventually(t, func() bool { d, _ := monA.Degraded(); return !d }, 10*time.Second, 20*time.Millisecond)
	gotHash, err := srv.Client().HGetAll(ctx, keys.Task(id)).Result()
	require.NoError(t, err)
	gotCkpt, err := srv.Client().Get(ctx, keys.Checkpoint(id)).Result()
	require.NoError(t, err)
	assert.Equal(t, wantHash, gotHash, "Redis keeps B's task")
	assert.Equal(t, wantCkpt, gotCkpt, "and B's checkpoint")
	seen, err := a.Tasks().Task(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, taken.Attempt(), seen.Attempt(), "A now reads B's state")
}

// A Redis that lost its data without any command failing (restarted between two commands, or
// flushed) is noticed by the next write, which finds its task gone: everything is written back.
func TestRedisThatLostDataUnnoticedIsRepopulated(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	store, mon := startStore(t, fastClient(t, srv.Addr()), nil)
	ctx := context.Background()
	p, tasks := newPlan(t, "l1", "l2")
	require.NoError(t, store.CreatePlan(ctx, p, tasks))
	runStage(t, store, tasks[0].ID())

	require.NoError(t, srv.Client().FlushAll(ctx).Err())
	runStage(t, store, tasks[0].ID()) // finds its task gone: degraded, journaled
	require.Eventually(t, func() bool { d, _ := mon.Degraded(); return !d && store.JournalLen() == 0 },
		10*time.Second, 20*time.Millisecond)

	fresh := redisrepo.New(srv.Client(), redisrepo.Options{})
	got, err := fresh.Tasks().Task(ctx, tasks[0].ID())
	require.NoError(t, err)
	assert.Equal(t, 2, got.CurrentStage())
	other, err := fresh.Tasks().Latest(ctx, "l2")
	require.NoError(t, err, "aggregates the outage did not touch are written back too")
	assert.Equal(t, tasks[1].ID(), other.ID())
	_, err = fresh.Plans().Plan(ctx, p.ID())
	require.NoError(t, err)
}

// An idle store (it writes nothing, it is only asked by tenant) notices within LeaseTTL/3
// that Redis lost its data, and writes back what it holds: a tenant query answers again.
func TestAnIdleStoreNoticesRedisLostItsData(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	const every = 200 * time.Millisecond
	mon := outage.NewMonitor(slog.New(slog.DiscardHandler))
	store := redisrepo.New(fastClient(t, srv.Addr()), redisrepo.Options{Monitor: mon, Logger: slog.New(slog.DiscardHandler), LeaseTTL: 3 * every})
	require.NoError(t, store.Start(context.Background()))
	t.Cleanup(func() { _ = store.Stop(context.Background()) })
	ctx := context.Background()
	p, tasks := newPlan(t, "idle1")
	require.NoError(t, store.CreatePlan(ctx, p, tasks))
	runStage(t, store, tasks[0].ID())

	require.NoError(t, srv.Client().FlushAll(ctx).Err())
	_, err := store.Tasks().Latest(ctx, "idle1")
	require.ErrorIs(t, err, task.ErrNotFound, "before the check, Redis answers that it knows no such tenant")
	fresh := redisrepo.New(srv.Client(), redisrepo.Options{})
	require.Eventually(t, func() bool {
		got, err := fresh.Tasks().Latest(ctx, "idle1")
		return err == nil && got.ID() == tasks[0].ID() && got.CurrentStage() == 1
	}, 20*every+10*time.Second, 20*time.Millisecond, "the task is written back without anything asking for it")
	require.Eventually(t, func() bool { d, _ := mon.Degraded(); return !d }, 10*time.Second, 20*time.Millisecond)
	got, err := store.Tasks().Latest(ctx, "idle1")
	require.NoError(t, err)
	require.Equal(t, tasks[0].ID(), got.ID())
}

// A Redis that lost its script cache (SCRIPT FLUSH, or a restart) answers NOSCRIPT: the scripts
// are sent again and nothing degrades.
func TestNoScriptIsHandledBySendingTheScriptAgain(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	store, mon := startStore(t, fastClient(t, srv.Addr()), nil)
	ctx := context.Background()
	p, tasks := newPlan(t, "ns1")
	require.NoError(t, store.CreatePlan(ctx, p, tasks))
	runStage(t, store, tasks[0].ID())

	require.NoError(t, srv.Client().ScriptFlush(ctx).Err())
	runStage(t, store, tasks[0].ID())
	runStage(t, store, tasks[0].ID())
	down, _ := mon.Degraded()
	assert.False(t, down, "NOSCRIPT is not an outage")
	got, err := redisrepo.New(srv.Client(), redisrepo.Options{}).Tasks().Task(ctx, tasks[0].ID())
	require.NoError(t, err)
	assert.Equal(t, task.Completed, got.Status())
}

// Redis that went back to an older version of a task (a master failed over to a replica that
// had not received the last writes it acknowledged) while this executor was cut off: the
// write-back writes the executor's newer copy, since no writer can have made a version lower
// than one this executor saw; nothing is refused, the run goes on.
func TestWriteBackOverATaskRedisRolledBack(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	proxy := srv.NewProxy()
	conflicts := make(chan string, 4)
	a, monA := startStore(t, fastClient(t, proxy.Addr()), func(id string) { conflicts <- id })
	ctx := context.Background()
	raw := srv.Client()
	keys := rediskey.New("")

	p, tasks := newPlan(t, "r1")
	require.NoError(t, a.CreatePlan(ctx, p, tasks))
	id := tasks[0].ID()
	older, err := raw.HGetAll(ctx, keys.Task(id)).Result() // as created: no writer's token
	require.NoError(t, err)
	runStage(t, a, id) // acknowledged (the fence bump, the first stage), then lost below
	runStage(t, a, id)

	proxy.Cut()
	runStage(t, a, id) // completes the task on memory
	down, _ := monA.Degraded()
	require.True(t, down)
	rollBack(t, raw, id, older)
	require.NoError(t, raw.Del(ctx, keys.Checkpoint(id)).Err())

	proxy.Restore()
	requireWrittenBack(t, a, monA, raw, conflicts, id)
}

// rollBack puts a task's hash back as older held it, as a failover to a replica that lacked
// the writes since would.
func rollBack(t *testing.T, raw *redis.Client, id string, older map[string]string) {
	t.Helper()
	key := rediskey.New("").Task(id)
	require.NoError(t, raw.Del(context.Background(), key).Err())
	require.NoError(t, raw.HSet(context.Background(), key, older).Err())
}

// requireWrittenBack waits until the store left degraded mode, with no conflict reported,
// and Redis holding its copy of the task: completed, at its version, every stage in its
// checkpoint.
func requireWrittenBack(t *testing.T, s *redisrepo.Store, mon *outage.Monitor, raw *redis.Client, conflicts <-chan string, id string) {
	t.Helper()
	ctx := context.Background()
	require.Eventually(t, func() bool { d, _ := mon.Degraded(); return !d }, 10*time.Second, 20*time.Millisecond)
	select {
	case got := <-conflicts:
		t.Fatalf("taken for another writer's change: %s", got)
	default:
	}
	want, err := s.Tasks().Task(ctx, id)
	require.NoError(t, err)
	require.Equal(t, task.Completed, want.Status())
	fresh := redisrepo.New(raw, redisrepo.Options{})
	got, err := fresh.Tasks().Task(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, task.Completed, got.Status(), "Redis holds the executor's newer copy")
	assert.Equal(t, want.Version(), got.Version())
	cp, err := fresh.Checkpoints().Checkpoint(ctx, id)
	require.NoError(t, err)
	assert.Len(t, cp.CompletedStages(), len(specs3), "no completed stage lost")
}

// A run's write that finds its task at a lower version than the one it wrote (Redis lost
// writes it acknowledged, with no outage seen: a failover to a replica that lacked them) is
// not a conflict: the store takes it for a loss of data, writes its newer copy back, and
// renews the generation so that the other executors write back what they hold too.
func TestAWriteFindingAnOlderVersionWritesBackAndRenewsTheGeneration(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	conflicts := make(chan string, 4)
	a, monA := startStore(t, fastClient(t, srv.Addr()), func(id string) { conflicts <- id })
	ctx := context.Background()
	raw := srv.Client()
	keys := rediskey.New("")

	p, tasks := newPlan(t, "b1")
	require.NoError(t, a.CreatePlan(ctx, p, tasks))
	id := tasks[0].ID()
	runStage(t, a, id)
	older, err := raw.HGetAll(ctx, keys.Task(id)).Result()
	require.NoError(t, err)
	gen, err := raw.HGet(ctx, keys.Generation(), "token").Result()
	require.NoError(t, err)
	runStage(t, a, id) // acknowledged, then rolled back:
	rollBack(t, raw, id, older)

	runStage(t, a, id) // finds the older version: written on memory, then back
	requireWrittenBack(t, a, monA, raw, conflicts, id)
	renewed, err := raw.HGet(ctx, keys.Generation(), "token").Result()
	require.NoError(t, err)
	assert.NotEqual(t, gen, renewed, "a new generation: the other executors learn of the loss")
}
