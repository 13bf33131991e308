package redisrepo_test

import (
	"context"
	"log/slog"
	"sync"
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
)

// conflicts records the task ids a store's write-back stopped (Options.OnConflict).
type conflicts struct {
	mu  sync.Mutex
	ids []string
}

func (c *conflicts) add(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ids = append(c.ids, id)
}

func (c *conflicts) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.ids...)
}

// startFastStore is one executor's store with a short lease TTL (it checks Redis's data every
// TTL/3), started and stopped when t ends.
func startFastStore(t *testing.T, client redis.UniversalClient, leaseTTL time.Duration, c *conflicts) (*redisrepo.Store, *outage.Monitor) {
	t.Helper()
	mon := outage.NewMonitor(slog.New(slog.DiscardHandler))
	s := redisrepo.New(client, redisrepo.Options{Monitor: mon, Logger: slog.New(slog.DiscardHandler), LeaseTTL: leaseTTL, OnConflict: c.add})
	require.NoError(t, s.Start(context.Background()))
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	return s, mon
}

// After Redis lost its data, every executor writes back what it holds, some of it stale: the
// executor that accepted a plan holds its task PENDING while another ran it to its end and gave
// its tenant a new task. Whoever writes back first, Redis ends with the newest copy of each
// task and the tenant held by its newest task; no run is stopped.
func TestAStaleCopyWrittenBackFirstLosesToTheNewerOne(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	proxy := srv.NewProxy()
	const leaseTTL = 600 * time.Millisecond
	var conflictsA, conflictsB conflicts
	a, monA := startFastStore(t, fastClient(t, srv.Addr()), leaseTTL, &conflictsA)
	b, monB := startFastStore(t, fastClient(t, proxy.Addr()), leaseTTL, &conflictsB)
	ctx := context.Background()

	// A accepts the plan; B runs its task to the end, then the tenant's next task halfway.
	p1, first := newPlan(t, "lw1")
	require.NoError(t, a.CreatePlan(ctx, p1, first))
	for range specs3 {
		runStage(t, b, first[0].ID())
	}
	p2, second := newPlan(t, "lw1")
	require.NoError(t, b.CreatePlan(ctx, p2, second))
	runStage(t, b, second[0].ID())
	stale, err := a.Tasks().Peek(ctx, first[0].ID())
	require.NoError(t, err)
	require.Equal(t, task.Pending, stale.Status(), "A holds the copy it created")

	// B is cut off while Redis loses its data: A writes back first.
	proxy.Cut()
	require.NoError(t, srv.Client().FlushAll(ctx).Err())
	reader := redisrepo.New(srv.Client(), redisrepo.Options{})
	require.Eventually(t, func() bool {
		got, err := reader.Tasks().Task(ctx, first[0].ID())
		d, _ := monA.Degraded()
		return err == nil && got.Status() == task.Pending && !d
	}, 15*time.Second, 20*time.Millisecond, "A wrote back its stale copy")

	proxy.Restore()
	keys := rediskey.New("")
	require.Eventually(t, func() bool {
		d, _ := monB.Degraded()
		return !d && srv.Client().Exists(ctx, keys.Task(second[0].ID())).Val() == 1
	}, 15*time.Second, 20*time.Millisecond, "B wrote back")

	got, err := reader.Tasks().Task(ctx, first[0].ID())
	require.NoError(t, err)
	assert.Equal(t, task.Completed, got.Status(), "B's newer copy replaced A's stale one")
	assert.Equal(t, len(specs3), got.CurrentStage())
	running, err := reader.Tasks().Task(ctx, second[0].ID())
	require.NoError(t, err)
	assert.Equal(t, task.Running, running.Status())
	assert.Equal(t, second[0].ID(), srv.Client().Get(ctx, keys.TenantActive("lw1")).Val(), "the tenant is held by its newest task")
	assert.Equal(t, second[0].ID(), srv.Client().Get(ctx, keys.TenantIndex("lw1")).Val())
	assert.Empty(t, conflictsB.list(), "no run of B is stopped")
	latest, err := reader.Plans().Plan(ctx, p2.ID())
	require.NoError(t, err)
	assert.Equal(t, plan.Pending, latest.Status())
}

// A cancel acknowledged by an executor cut off from Redis is not lost when its write-back
// conflicts with another executor's change meanwhile (here a reaper that found the run's owner
// gone): the cancel is applied to the task as Redis holds it.
func TestACancelAcknowledgedWhileDegradedWinsTheWriteBackConflict(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	proxy := srv.NewProxy()
	const leaseTTL = 600 * time.Millisecond
	var conflictsA, conflictsB conflicts
	a, _ := startFastStore(t, fastClient(t, srv.Addr()), leaseTTL, &conflictsA)
	b, monB := startFastStore(t, fastClient(t, proxy.Addr()), leaseTTL, &conflictsB)
	ctx := context.Background()
	p, tasks := newPlan(t, "cw1")
	require.NoError(t, b.CreatePlan(ctx, p, tasks))
	id := tasks[0].ID()
	runStage(t, b, id)

	proxy.Cut()
	reason := task.Failure{Class: "cancelled", Message: "cancel requested"}
	cancelled, err := b.Tasks().Update(ctx, id, func(tk *task.Task) (*checkpoint.Checkpoint, error) {
		return nil, tk.Cancel(&reason, time.Now())
	})
	require.NoError(t, err, "B acknowledges the cancel on memory")
	require.Equal(t, task.Cancelled, cancelled.Status())
	down, _ := monB.Degraded()
	require.True(t, down)

	// A finds B gone and reaps the task meanwhile.
	_, err = a.Tasks().BumpFence(ctx, id)
	require.NoError(t, err)
	reaped, err := a.Tasks().Update(ctx, id, func(tk *task.Task) (*checkpoint.Checkpoint, error) {
		return nil, tk.Interrupt(task.Failure{Class: "lease_lost", Message: "owner gone"}, time.Now())
	})
	require.NoError(t, err)
	require.Equal(t, task.Interrupted, reaped.Status())

	proxy.Restore()
	require.Eventually(t, func() bool { d, _ := monB.Degraded(); return !d }, 15*time.Second, 20*time.Millisecond)
	got, err := redisrepo.New(srv.Client(), redisrepo.Options{}).Tasks().Task(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, task.Cancelled, got.Status(), "the acknowledged cancel is applied to Redis's copy")
	assert.Equal(t, reason.Message, got.LastError().Message)
	assert.Contains(t, conflictsB.list(), id, "B's own copy lost the compare-and-set")
	assert.Zero(t, srv.Client().Exists(ctx, rediskey.New("").TenantActive("cw1")).Val(), "the tenant is free")
}

// After Redis lost its data, the executor is told that Redis is back (so that it queues again
// the PENDING tasks it holds) only once new claims may be made again, one lease TTL after the
// loss: by then every other executor wrote back its copies, among them the ends of tasks this
// one holds PENDING.
func TestRestoredAfterADataLossWaitsForTheClaimsPause(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	const leaseTTL = 1500 * time.Millisecond
	type restored struct {
		lost bool
		at   time.Time
	}
	told := make(chan restored, 4)
	mon := outage.NewMonitor(slog.New(slog.DiscardHandler))
	s := redisrepo.New(fastClient(t, srv.Addr()), redisrepo.Options{Monitor: mon, Logger: slog.New(slog.DiscardHandler),
		LeaseTTL: leaseTTL, OnRestored: func(lost bool) { told <- restored{lost, time.Now()} }})
	require.NoError(t, s.Start(context.Background()))
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	ctx := context.Background()
	p, tasks := newPlan(t, "rw1")
	require.NoError(t, s.CreatePlan(ctx, p, tasks))

	require.NoError(t, srv.Client().FlushAll(ctx).Err())
	lostAt := time.Now()
	require.Eventually(t, func() bool { d, _ := mon.Degraded(); return d }, 10*time.Second, 5*time.Millisecond, "the loss is noticed")
	require.Eventually(t, func() bool { d, _ := mon.Degraded(); return !d }, 10*time.Second, 5*time.Millisecond, "and written back")
	wroteBack := time.Now()
	select {
	case r := <-told:
		require.True(t, r.lost)
		assert.GreaterOrEqual(t, r.at.Sub(lostAt), leaseTTL, "told once the claims pause is over")
		assert.Greater(t, r.at.Sub(wroteBack), time.Duration(0))
	case <-time.After(10 * time.Second):
		t.Fatal("never told that Redis is back")
	}
}

// A copy an executor only read, of a task that has not ended, is not written back after Redis
// lost its data (it is stale by nature), and is dropped from memory: reading the task then
// finds it missing (until its runner writes it back), not another loss of Redis's data.
func TestAReadCopyIsDroppedNotWrittenBackAfterADataLoss(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	proxy := srv.NewProxy()
	const leaseTTL = 600 * time.Millisecond
	var conflictsA, conflictsR conflicts
	a, _ := startFastStore(t, fastClient(t, proxy.Addr()), leaseTTL, &conflictsA)
	r, monR := startFastStore(t, fastClient(t, srv.Addr()), leaseTTL, &conflictsR)
	ctx := context.Background()
	p, tasks := newPlan(t, "rc1")
	require.NoError(t, a.CreatePlan(ctx, p, tasks))
	id := tasks[0].ID()
	runStage(t, a, id)
	read, err := r.Tasks().Task(ctx, id)
	require.NoError(t, err)
	require.Equal(t, task.Running, read.Status())

	proxy.Cut() // a, the runner, writes back later
	require.NoError(t, srv.Client().FlushAll(ctx).Err())
	require.Eventually(t, func() bool { d, _ := monR.Degraded(); return d }, 10*time.Second, 5*time.Millisecond, "r notices the loss")
	require.Eventually(t, func() bool { d, _ := monR.Degraded(); return !d }, 10*time.Second, 5*time.Millisecond, "and writes back")
	require.Zero(t, srv.Client().Exists(ctx, rediskey.New("").Task(id)).Val(), "r's read copy is not written back")

	_, err = r.Tasks().Task(ctx, id)
	require.ErrorIs(t, err, task.ErrNotFound)
	down, _ := monR.Degraded()
	require.False(t, down, "a task missing from Redis that r only read is not another loss")

	proxy.Restore()
	require.Eventually(t, func() bool {
		got, err := r.Tasks().Task(ctx, id)
		return err == nil && got.Status() == task.Running && got.CurrentStage() == 1
	}, 15*time.Second, 20*time.Millisecond, "the runner writes it back")
}

// The executor that accepted a plan holds its tasks as it created them while other executors
// run them; once it reads the plan ended, it reads those copies again: it then holds the
// tasks' ends, not stale PENDING copies (what it would write back should Redis lose its data).
func TestAnEndedPlanRefreshesTheAcceptingExecutorsTaskCopies(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var none conflicts
	a, _ := startFastStore(t, fastClient(t, srv.Addr()), time.Minute, &none)
	b, _ := startFastStore(t, fastClient(t, srv.Addr()), time.Minute, &none)
	ctx := context.Background()
	p, tasks := newPlan(t, "rf1", "rf2")
	require.NoError(t, a.CreatePlan(ctx, p, tasks))
	_, err := b.Plans().Update(ctx, p.ID(), func(p *plan.Plan) error { return p.Start(time.Now()) })
	require.NoError(t, err)
	_, err = a.Plans().Plan(ctx, p.ID()) // a holds the plan RUNNING
	require.NoError(t, err)
	for _, tk := range tasks {
		for range specs3 {
			runStage(t, b, tk.ID())
		}
	}
	_, err = b.Plans().Update(ctx, p.ID(), func(p *plan.Plan) error { return p.Complete(time.Now()) })
	require.NoError(t, err)
	for _, tk := range tasks {
		stale, err := a.Tasks().Peek(ctx, tk.ID())
		require.NoError(t, err)
		require.Equal(t, task.Pending, stale.Status(), "precondition: a's copy is the one it created")
	}

	got, err := a.Plans().Plan(ctx, p.ID())
	require.NoError(t, err)
	require.Equal(t, plan.Completed, got.Status())
	for _, tk := range tasks {
		copyOf, err := a.Tasks().Peek(ctx, tk.ID())
		require.NoError(t, err)
		assert.Equal(t, task.Completed, copyOf.Status(), tk.TenantID())
	}
}

// The executor that accepted a plan and ends it (its settle, after other executors ran the
// tasks) reads its stale copies of the tasks again too.
func TestEndingAPlanRefreshesTheTaskCopiesOfTheExecutorThatEndsIt(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var none conflicts
	a, _ := startFastStore(t, fastClient(t, srv.Addr()), time.Minute, &none)
	b, _ := startFastStore(t, fastClient(t, srv.Addr()), time.Minute, &none)
	ctx := context.Background()
	p, tasks := newPlan(t, "re1")
	require.NoError(t, a.CreatePlan(ctx, p, tasks))
	_, err := a.Plans().Update(ctx, p.ID(), func(p *plan.Plan) error { return p.Start(time.Now()) })
	require.NoError(t, err)
	for range specs3 {
		runStage(t, b, tasks[0].ID())
	}
	stale, err := a.Tasks().Peek(ctx, tasks[0].ID())
	require.NoError(t, err)
	require.Equal(t, task.Pending, stale.Status(), "precondition: a's copy is the one it created")

	_, err = a.Plans().Update(ctx, p.ID(), func(p *plan.Plan) error { return p.Complete(time.Now()) })
	require.NoError(t, err)
	copyOf, err := a.Tasks().Peek(ctx, tasks[0].ID())
	require.NoError(t, err)
	assert.Equal(t, task.Completed, copyOf.Status())
}

// A loss found by a missing key is handled once: the next outage, one where Redis keeps its
// data, is not taken for another loss (which would write everything back as newest-wins).
func TestAnOutageAfterAHandledLossIsNotAnotherLoss(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	proxy := srv.NewProxy()
	told := make(chan bool, 8)
	mon := outage.NewMonitor(slog.New(slog.DiscardHandler))
	s := redisrepo.New(fastClient(t, proxy.Addr()), redisrepo.Options{Monitor: mon, Logger: slog.New(slog.DiscardHandler),
		LeaseTTL: 3 * time.Second, OnRestored: func(lost bool) { told <- lost }})
	require.NoError(t, s.Start(context.Background()))
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	ctx := context.Background()
	p, tasks := newPlan(t, "ol1")
	require.NoError(t, s.CreatePlan(ctx, p, tasks))
	runStage(t, s, tasks[0].ID())

	require.NoError(t, srv.Client().FlushAll(ctx).Err())
	runStage(t, s, tasks[0].ID()) // finds its task gone: the loss
	select {
	case lost := <-told:
		require.True(t, lost)
	case <-time.After(15 * time.Second):
		t.Fatal("the loss is never written back")
	}

	proxy.Cut()
	runStage(t, s, tasks[0].ID()) // an outage: Redis keeps its data
	down, _ := mon.Degraded()
	require.True(t, down)
	proxy.Restore()
	select {
	case lost := <-told:
		require.False(t, lost, "an outage after a handled loss is not another loss")
	case <-time.After(15 * time.Second):
		t.Fatal("never written back")
	}
}

// When an executor takes an outage for a loss of Redis's data but Redis kept the task (the
// sentinel key alone was lost), its write-back of the task is the usual compare-and-set: a
// change another executor made meanwhile (a cancel) is never overwritten by the higher
// version of the changes this one made while degraded.
func TestALossOfOtherKeysLeavesTheCompareAndSetOnTheTasksRedisKept(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	proxy := srv.NewProxy()
	var conflictsA, conflictsB conflicts
	a, monA := startFastStore(t, fastClient(t, proxy.Addr()), 3*time.Second, &conflictsA)
	b, _ := startFastStore(t, fastClient(t, srv.Addr()), 3*time.Second, &conflictsB)
	ctx := context.Background()
	p, tasks := newPlan(t, "kp1")
	require.NoError(t, a.CreatePlan(ctx, p, tasks))
	id := tasks[0].ID()
	runStage(t, a, id)

	proxy.Cut()
	runStage(t, a, id)
	runStage(t, a, id) // completed on memory
	down, _ := monA.Degraded()
	require.True(t, down)
	reason := task.Failure{Class: "cancelled", Message: "cancel requested"}
	_, err := b.Tasks().Update(ctx, id, func(tk *task.Task) (*checkpoint.Checkpoint, error) {
		return nil, tk.Cancel(&reason, time.Now())
	})
	require.NoError(t, err, "b cancels the task in Redis meanwhile")
	keys, err := srv.Client().Keys(ctx, "executor:instance:*").Result()
	require.NoError(t, err)
	require.NotEmpty(t, keys)
	require.NoError(t, srv.Client().Del(ctx, keys...).Err(), "the sentinels are lost, the task is not")

	proxy.Restore()
	require.Eventually(t, func() bool { d, _ := monA.Degraded(); return !d }, 15*time.Second, 20*time.Millisecond)
	got, err := redisrepo.New(srv.Client(), redisrepo.Options{}).Tasks().Task(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, task.Cancelled, got.Status(), "b's cancel is kept")
	assert.Contains(t, conflictsA.list(), id)
}

// A task reaped INTERRUPTED (its owner paused past its lease) and not retried yet when Redis
// lost its data: the reaper writes back its copy, without the checkpoint it never held. The
// owner, back, loses the write-back of its stale copy (a newer epoch holds the task), but its
// checkpoint, which Redis lacks and which resumes at the stage of the task Redis holds, is
// written back: a retry from the checkpoint does not run the completed stages again (chaos
// seed 11).
func TestTheOwnersCheckpointIsWrittenBackUnderTheReapersCopy(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	proxy := srv.NewProxy()
	const leaseTTL = 600 * time.Millisecond
	var conflictsOwner, conflictsReaper conflicts
	owner, monOwner := startFastStore(t, fastClient(t, proxy.Addr()), leaseTTL, &conflictsOwner)
	reaper, monReaper := startFastStore(t, fastClient(t, srv.Addr()), leaseTTL, &conflictsReaper)
	ctx := context.Background()

	p, tasks := newPlan(t, "ck1")
	require.NoError(t, reaper.CreatePlan(ctx, p, tasks)) // it accepted the plan: it writes it back
	id := tasks[0].ID()
	runStage(t, owner, id)
	runStage(t, owner, id) // RUNNING at stage 2, its checkpoint resuming there

	// The reaper takes the task over (a new epoch) and interrupts it; it reads no checkpoint.
	_, err := reaper.Tasks().BumpFence(ctx, id)
	require.NoError(t, err)
	_, err = reaper.Tasks().Update(ctx, id, func(tk *task.Task) (*checkpoint.Checkpoint, error) {
		return nil, tk.Interrupt(task.Failure{Class: "lease_lost", Message: "its owner is gone"}, time.Now())
	})
	require.NoError(t, err)

	// The owner is cut off (paused) while Redis loses its data: the reaper writes back first.
	proxy.Cut()
	require.NoError(t, srv.Client().FlushAll(ctx).Err())
	keys := rediskey.New("")
	reader := redisrepo.New(srv.Client(), redisrepo.Options{})
	require.Eventually(t, func() bool {
		got, err := reader.Tasks().Task(ctx, id)
		d, _ := monReaper.Degraded()
		return err == nil && got.Status() == task.Interrupted && !d
	}, 15*time.Second, 20*time.Millisecond, "the reaper wrote back its copy")
	require.Zero(t, srv.Client().Exists(ctx, keys.Checkpoint(id)).Val(), "the reaper never held the checkpoint")

	proxy.Restore()
	require.Eventually(t, func() bool {
		d, _ := monOwner.Degraded()
		return !d && len(conflictsOwner.list()) > 0
	}, 15*time.Second, 20*time.Millisecond, "the owner wrote back, and its copy lost to the newer epoch")
	got, err := reader.Tasks().Task(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, task.Interrupted, got.Status(), "the reaper's copy stays")
	assert.Equal(t, 2, got.CurrentStage())
	cp, err := reader.Checkpoints().Checkpoint(ctx, id)
	require.NoError(t, err, "the owner's checkpoint was written back")
	assert.Equal(t, got.CurrentStage(), cp.Next(), "it resumes where the task stands")
	assert.Equal(t, []string{"push", "restart"}, cp.CompletedStages())
}
