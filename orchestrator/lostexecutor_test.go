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
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/dispatch"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/orchestrator"
	"github.com/executor-dev/executor/stagekind"
)

// An executor that dies with every task of a plan RUNNING (none left queued): whoever finds
// the loss (a survivor's reconciler, or a read), the plan is PAUSED with a reason naming the
// lost executor and its tenants, never settled FAILED; a settle that runs between the
// interruption and the pause leaves the plan to the pause.

// sharedQueue is an in-process dispatch queue that reports itself shared, as the Redis one
// does: several orchestrators of one test take work from it, and their reconcilers run.
type sharedQueue struct{ dispatch.Port }

func (sharedQueue) Shared() bool { return true }

// members is a Cluster where every executor is alive but those marked dead, and every
// executor's own liveness is steady.
type members struct {
	mu   sync.Mutex
	dead map[string]bool
}

func (m *members) AliveSince(_ context.Context, name string, _ time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !m.dead[name], nil
}

func (m *members) Steady(context.Context, time.Duration) (bool, error) { return true, nil }

// lostCluster is executors sharing one in-memory store and one shared queue: idle (not
// started: it submits, reads and commands, and reaps when it reads) and survivors started on
// demand. The executor "exec-a" is dead.
type lostCluster struct {
	db      *memrepo.DB
	locker  *lock.Memory
	queue   sharedQueue
	kinds   *stagekind.Registry // every executor's stage kinds
	cluster *members
	idle    *app.Service
}

// lostTTL is the lease TTL of lostCluster's executors: their reconcilers look every TTL/4.
const lostTTL = 400 * time.Millisecond

func newLostCluster(t *testing.T) *lostCluster {
	t.Helper()
	// Claims are made an hour ago: a dead executor's claims are old enough to be judged.
	q := dispatch.NewMemory(dispatch.MemoryOptions{Clock: func() time.Time { return time.Now().Add(-time.Hour) }})
	c := &lostCluster{
		db: memrepo.New(), locker: lock.NewMemory(), queue: sharedQueue{dispatch.ForMemory(q)},
		cluster: &members{dead: map[string]bool{"exec-a": true}},
	}
	c.kinds = stagekind.Builtin(stagekind.HTTPOptions{})
	idle := orchestrator.New(c.db.Plans(), c.db.Tasks(), c.db.Checkpoints(), c.locker, c.kinds, c.config("exec-c"))
	c.idle = app.New(app.Deps{
		Creator: c.db, Plans: c.db.Plans(), Tasks: c.db.Tasks(), Checkpoints: c.db.Checkpoints(), Index: c.db.Tasks(),
		Kinds: c.kinds, Holders: c.locker, Launcher: idle, PlanControl: idle, TaskControl: idle, Reaper: idle, Watcher: idle, Unlocker: idle, Availability: apptest.Draining(idle),
	})
	return c
}

func (c *lostCluster) config(name string) orchestrator.Config {
	return orchestrator.Config{Name: name, Workers: 4, LeaseTTL: lostTTL, Cluster: c.cluster, Queue: c.queue,
		Rand: func() float64 { return 0.5 }, Logger: nodeLogger()}
}

// survivor starts an executor that takes work from the queue and reconciles claims.
func (c *lostCluster) survivor(t *testing.T, name string) *app.Service {
	t.Helper()
	svc, _ := apptest.New(t, apptest.Stores{
		Creator: c.db, Plans: c.db.Plans(), Tasks: c.db.Tasks(), Checkpoints: c.db.Checkpoints(), Index: c.db.Tasks(), Locker: c.locker,
	}, c.kinds, c.config(name))
	return svc
}

// runOnDeadExecutor submits a plan of n tenants (maxConcurrency n) and makes every task look
// like a run of exec-a, killed mid-stage: claimed by exec-a, RUNNING there since a stale
// heartbeat, its lease gone.
func (c *lostCluster) runOnDeadExecutor(t *testing.T, prefix string, n int) *plan.Plan {
	t.Helper()
	ctx := context.Background()
	sub, err := c.idle.Submit(ctx, app.SubmitRequest{
		MaxConcurrency: n, Tenants: tenants(prefix, n), Stages: stages("noop", "one", "two"),
	})
	require.NoError(t, err)
	p := sub.Plan.Plan
	claimed, _, err := c.queue.ClaimN(ctx, p.ID(), "exec-a", n)
	require.NoError(t, err)
	require.Len(t, claimed, n, "exec-a claimed every task")
	for _, id := range p.TaskIDs() {
		c.startOnDeadExecutor(t, id)
	}
	return p
}

// startOnDeadExecutor makes task id RUNNING on exec-a since a stale heartbeat.
func (c *lostCluster) startOnDeadExecutor(t *testing.T, id string) {
	t.Helper()
	ctx := context.Background()
	tk, err := c.db.Tasks().BumpFence(ctx, id)
	require.NoError(t, err)
	require.NoError(t, tk.StartOn(tk.Fence(), "exec-a", time.Now().Add(-2*time.Minute)))
	require.NoError(t, c.db.Tasks().Save(ctx, tk, nil))
}

// storedPlan reads the plan from the store (no read through the service: it would reap).
func (c *lostCluster) storedPlan(t *testing.T, planID string) *plan.Plan {
	t.Helper()
	p, err := c.db.Plans().Plan(context.Background(), planID)
	require.NoError(t, err)
	return p
}

func (c *lostCluster) statuses(t *testing.T, p *plan.Plan) map[task.Status]int {
	t.Helper()
	tasks, err := c.db.Tasks().ByIDs(context.Background(), p.TaskIDs())
	require.NoError(t, err)
	out := map[task.Status]int{}
	for _, tk := range tasks {
		out[tk.Status()]++
	}
	return out
}

// requirePausedForLoss waits until the plan has changed from RUNNING and requires it PAUSED
// with a reason naming exec-a and tenants.
func (c *lostCluster) requirePausedForLoss(t *testing.T, planID string, tenants ...string) {
	t.Helper()
	require.Eventually(t, func() bool { return c.storedPlan(t, planID).Status() != plan.Running },
		10*time.Second, 5*time.Millisecond, "the plan changes once exec-a's loss is found")
	p := c.storedPlan(t, planID)
	require.Equal(t, plan.Paused, p.Status(), "not settled: an SRE decides")
	assert.Contains(t, p.Reason(), "exec-a", "the reason names the lost executor")
	for _, tn := range tenants {
		assert.Contains(t, p.Reason(), tn, "the reason names the interrupted tenant")
	}
}

func TestExecutorLostWithEveryTaskRunningPausesThePlan(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		found func(t *testing.T, c *lostCluster, p *plan.Plan)
	}{
		{name: "a survivor's reconciler finds the loss", found: func(t *testing.T, c *lostCluster, _ *plan.Plan) {
			c.survivor(t, "exec-b")
		}},
		{name: "reads find the loss, one task at a time", found: func(t *testing.T, c *lostCluster, p *plan.Plan) {
			for _, id := range p.TaskIDs() {
				v, err := c.idle.Task(context.Background(), id)
				require.NoError(t, err)
				require.Equal(t, task.Interrupted, v.Task.Status())
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newLostCluster(t)
			p := c.runOnDeadExecutor(t, "lost", 3)

			tc.found(t, c, p)
			c.requirePausedForLoss(t, p.ID(), "lost-000", "lost-001", "lost-002")
			assert.Equal(t, map[task.Status]int{task.Interrupted: 3}, c.statuses(t, p))
			for _, id := range p.TaskIDs() {
				tk, err := c.db.Tasks().Task(context.Background(), id)
				require.NoError(t, err)
				require.NotNil(t, tk.LastError())
				assert.Equal(t, stage.ClassLeaseLost, tk.LastError().Class)
			}

			// The SRE decides, on a survivor: every tenant completes.
			b := c.survivor(t, "exec-d")
			ctx := context.Background()
			_, err := b.ResumePlan(ctx, p.ID(), false)
			require.NoError(t, err)
			retry, err := b.RetryPlan(ctx, p.ID(), app.RetryPlanRequest{FromCheckpoint: true})
			require.NoError(t, err)
			assert.Len(t, retry.Retried, 3)
			v, err := b.WaitPlan(ctx, p.ID(), 10*time.Second)
			require.NoError(t, err)
			assert.Equal(t, plan.Completed, v.Plan.Status())
		})
	}
}

// The reaper interrupted the last RUNNING task of the plan but has not paused the plan yet
// (its claim still held by the dead executor) when a settle runs on another executor (here:
// an operator cancels the plan's only other task): that settle leaves the plan, which the
// reconciler then pauses.
func TestSettleBetweenTheInterruptionAndThePauseLeavesThePlanToThePause(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newLostCluster(t)
	sub, err := c.idle.Submit(ctx, app.SubmitRequest{
		MaxConcurrency: 1, Tenants: tenants("race", 2), Stages: stages("noop", "one", "two"),
	})
	require.NoError(t, err)
	p := sub.Plan.Plan
	claimed, _, err := c.queue.ClaimN(ctx, p.ID(), "exec-a", 1)
	require.NoError(t, err)
	require.Equal(t, []string{p.TaskIDs()[0]}, claimed)
	c.startOnDeadExecutor(t, claimed[0])
	// The reaper's write, as a survivor made it: INTERRUPTED (lease_lost), the plan not paused yet.
	tk, err := c.db.Tasks().BumpFence(ctx, claimed[0])
	require.NoError(t, err)
	require.NoError(t, tk.Abandon(tk.Fence(), task.Failure{Stage: "one", Class: stage.ClassLeaseLost, Message: "owner lost"}, time.Now()))
	require.NoError(t, c.db.Tasks().Save(ctx, tk, nil))

	_, err = c.idle.CancelTenant(ctx, "race-001") // the plan's last task ends: it settles
	require.NoError(t, err)
	assert.Equal(t, plan.Running, c.storedPlan(t, p.ID()).Status(),
		"a settle does not end a plan whose lost run is still being judged")

	c.survivor(t, "exec-b")
	c.requirePausedForLoss(t, p.ID(), "race-000")
	eventually(t, "the lost run's claim is freed", func() bool {
		q, claims, err := c.queue.Len(ctx, p.ID())
		return err == nil && q+claims == 0
	})
	time.Sleep(2 * lostTTL) // the survivor's reconciler and settles run again
	assert.Equal(t, plan.Paused, c.storedPlan(t, p.ID()).Status(), "nothing settles a plan paused for a loss")
}

// A plan paused because an executor was lost stays PAUSED when its last run elsewhere ends:
// it is not settled FAILED behind the SRE's back.
func TestPlanPausedForALossIsNotSettledWhenItsOtherRunsEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newLostCluster(t)
	release := make(chan struct{})
	require.NoError(t, c.kinds.Register("hold", stage.HandlerFunc(func(ctx context.Context, _ stage.Request) (json.RawMessage, error) {
		select {
		case <-release:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})))
	sub, err := c.idle.Submit(ctx, app.SubmitRequest{
		MaxConcurrency: 2, Tenants: tenants("tail", 2), Stages: stages("hold", "one"),
	})
	require.NoError(t, err)
	p := sub.Plan.Plan
	claimed, _, err := c.queue.ClaimN(ctx, p.ID(), "exec-a", 1)
	require.NoError(t, err)
	require.Equal(t, []string{p.TaskIDs()[0]}, claimed)
	c.startOnDeadExecutor(t, claimed[0])

	c.survivor(t, "exec-b") // runs tail-001 (held) and finds exec-a's loss
	c.requirePausedForLoss(t, p.ID(), "tail-000")
	assert.NotContains(t, c.storedPlan(t, p.ID()).Reason(), "tail-001")
	close(release)
	eventually(t, "tail-001 completes", func() bool {
		return c.statuses(t, p)[task.Completed] == 1
	})
	time.Sleep(2 * lostTTL) // its end's settle, and the reconciler's rounds
	assert.Equal(t, plan.Paused, c.storedPlan(t, p.ID()).Status(), "an SRE decides")
}
