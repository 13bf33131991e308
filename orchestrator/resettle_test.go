package orchestrator_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/stagekind"
)

// hold registers kind on n as a stage that blocks until the returned func is called (or its
// run is cancelled), counted in n.holding while it runs: a test that cuts a node off waits for
// its stage to run, not only for its claim (a claimed task whose run has not started when the
// node is cut off is handed back, and another node runs it).
func (n *node) hold(t *testing.T, kind string) (release func()) {
	t.Helper()
	ch := make(chan struct{})
	require.NoError(t, n.kinds.Register(kind, stage.HandlerFunc(func(ctx context.Context, _ stage.Request) (json.RawMessage, error) {
		n.holding.Add(1)
		defer n.holding.Add(-1)
		select {
		case <-ch:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})))
	return sync.OnceFunc(func() { close(ch) })
}

// The last task of a plan ends on executor a while a is cut off from its store's Redis (its
// queue still answers, as after a store command timed out): a settles on memory, where it never
// saw the plan's other task end (b ran it, and b settled from Redis while a's task was still
// RUNNING there). Once a has written its task back, the plan settles.
func TestAPlanWhoseLastTaskEndedWhileDegradedSettlesAfterTheWriteBack(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	proxy := srv.NewProxy()
	creator := newNode(t, nodeOptions{name: "creator", storeAddr: srv.Addr(), queueAddr: srv.Addr(), idle: true})
	a := newNode(t, nodeOptions{name: "a", storeAddr: proxy.Addr(), queueAddr: srv.Addr(), workers: 1})
	b := newNode(t, nodeOptions{name: "b", storeAddr: srv.Addr(), queueAddr: srv.Addr(), workers: 1})
	creator.hold(t, "hold")
	releaseA, releaseB := a.hold(t, "hold"), b.hold(t, "hold")
	t.Cleanup(releaseA)
	t.Cleanup(releaseB)
	ctx := context.Background()

	p := creator.submit(t, app.SubmitRequest{MaxConcurrency: 2, Tenants: tenants("ls", 2), Stages: stages("hold", "one")})
	eventually(t, "a and b each run one task", func() bool { // running its stage, not only claimed
		return a.holding.Load() == 1 && b.holding.Load() == 1
	})
	releaseB()
	eventually(t, "b's task completes; b does not settle: a's task is RUNNING", func() bool {
		v, err := creator.svc.Plan(ctx, p.ID())
		return err == nil && v.Progress.Counts[task.Completed] == 1
	})
	require.Equal(t, plan.Running, creator.planStatus(t, p.ID()))

	proxy.Cut()
	releaseA()
	eventually(t, "a's task ends on memory and its slot is freed", func() bool {
		queued, inflight, err := a.queue.Len(ctx, p.ID())
		return err == nil && queued+inflight == 0 && a.degraded()
	})
	require.Equal(t, plan.Running, creator.planStatus(t, p.ID()))

	proxy.Restore()
	eventually(t, "the plan settles once a has written its task back", func() bool {
		return creator.planStatus(t, p.ID()) == plan.Completed
	})
}

// A task approved on an executor cut off from Redis runs there on memory (the approval does
// not deadlock the store's journal), and its plan, whose other task another executor
// cancelled meanwhile (a's copy of it is stale), settles once a has written back.
func TestATaskApprovedWhileDegradedRunsAndItsPlanSettlesAfterTheWriteBack(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	proxy := srv.NewProxy()
	a := newNode(t, nodeOptions{name: "a", storeAddr: proxy.Addr(), queueAddr: proxy.Addr(), workers: 2})
	b := newNode(t, nodeOptions{name: "b", storeAddr: srv.Addr(), queueAddr: srv.Addr(), idle: true})
	ctx := context.Background()

	s := stages("noop", "gate", "after")
	s[0].Kind = stagekind.KindApproval
	p := a.submit(t, app.SubmitRequest{Tenants: tenants("rs", 2), Stages: s})
	waiting := func(tenant string) func() bool {
		return func() bool {
			v, err := a.svc.TenantTask(ctx, tenant)
			return err == nil && v.Task.Status() == task.Waiting
		}
	}
	eventually(t, "rs-000 waits at its gate", waiting("rs-000"))
	eventually(t, "rs-001 waits at its gate", waiting("rs-001"))

	// b cancels rs-001: a is not told, its copy still says WAITING; b's settle finds rs-000
	// WAITING in Redis.
	_, err := b.svc.CancelTenant(ctx, "rs-001")
	require.NoError(t, err)
	require.Equal(t, plan.Running, b.planStatus(t, p.ID()))

	// a is cut off, rs-000 is approved there and runs to its end on memory.
	proxy.Cut()
	_, err = a.svc.ApproveTenant(ctx, "rs-000", "")
	require.NoError(t, err)
	require.True(t, a.degraded())
	eventually(t, "rs-000 completes on a, degraded", func() bool {
		v, err := a.svc.TenantTask(ctx, "rs-000")
		return err == nil && v.Task.Status() == task.Completed
	})
	require.Equal(t, plan.Running, a.planStatus(t, p.ID()), "a's copy of rs-001 is stale: a cannot settle the plan yet")

	proxy.Restore()
	eventually(t, "the plan settles once a has written back: done, with rs-001 cancelled", func() bool {
		return b.planStatus(t, p.ID()) == plan.Completed
	})
	require.Equal(t, plan.Completed, a.planStatus(t, p.ID()))
}

// Among several executors (Shared), a plan whose last task ends while its executor
// is cut off from Redis is not ended from memory (its copies of the other tasks may be stale):
// it stays RUNNING there, and ends from Redis once the executor has written back.
func TestAmongSeveralExecutorsAPlanIsNotEndedFromMemory(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	proxy := srv.NewProxy()
	a := newNode(t, nodeOptions{name: "a", storeAddr: proxy.Addr(), queueAddr: srv.Addr(), workers: 1, settleFromRedis: true})
	release := a.hold(t, "hold")
	t.Cleanup(release)
	ctx := context.Background()
	p := a.submit(t, app.SubmitRequest{Tenants: tenants("sr", 1), Stages: stages("hold", "one")})
	eventually(t, "a runs the task", func() bool { return a.holding.Load() == 1 })

	proxy.Cut()
	release()
	eventually(t, "the task ends on memory", func() bool {
		v, err := a.svc.TenantTask(ctx, "sr-000")
		return err == nil && v.Task.Status() == task.Completed && a.degraded()
	})
	require.Never(t, func() bool { return a.planStatus(t, p.ID()) != plan.Running }, 300*time.Millisecond, 20*time.Millisecond,
		"the plan is not ended from memory")

	proxy.Restore()
	eventually(t, "the plan ends from Redis after the write-back", func() bool {
		return !a.degraded() && a.planStatus(t, p.ID()) == plan.Completed
	})
}

// A task of a plan ends on executor a while a is cut off from its store's Redis, but not from
// its queue: the queue says the plan has work left (b's task), so a does not settle. Then b's
// task, the plan's last, ends: b settles from Redis, where a's task is still RUNNING. Once a
// has written its task back, a settles the plan again: it ends.
func TestAPlanSettlesWhenATaskEndedWhileDegradedIsWrittenBackAfterTheLastEnded(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	proxy := srv.NewProxy()
	creator := newNode(t, nodeOptions{name: "creator", storeAddr: srv.Addr(), queueAddr: srv.Addr(), idle: true})
	a := newNode(t, nodeOptions{name: "a", storeAddr: proxy.Addr(), queueAddr: srv.Addr(), workers: 1, settleFromRedis: true})
	b := newNode(t, nodeOptions{name: "b", storeAddr: srv.Addr(), queueAddr: srv.Addr(), workers: 1, settleFromRedis: true})
	creator.hold(t, "hold")
	releaseA, releaseB := a.hold(t, "hold"), b.hold(t, "hold")
	t.Cleanup(releaseA)
	t.Cleanup(releaseB)
	ctx := context.Background()

	p := creator.submit(t, app.SubmitRequest{MaxConcurrency: 2, Tenants: tenants("lw", 2), Stages: stages("hold", "one")})
	eventually(t, "a and b each run one task", func() bool { // running its stage, not only claimed
		return a.holding.Load() == 1 && b.holding.Load() == 1
	})
	proxy.Cut()
	releaseA()
	eventually(t, "a's task ends on memory and its slot is freed", func() bool {
		_, inflight, err := a.queue.Len(ctx, p.ID())
		return err == nil && inflight == 1 && a.degraded()
	})
	releaseB()
	eventually(t, "b's task, the last, ends", func() bool {
		queued, inflight, err := b.queue.Len(ctx, p.ID())
		return err == nil && queued+inflight == 0
	})
	require.Equal(t, plan.Running, creator.planStatus(t, p.ID()), "b's settle saw a's task RUNNING in Redis")

	proxy.Restore()
	eventually(t, "the plan settles once a has written its task back", func() bool {
		return creator.planStatus(t, p.ID()) == plan.Completed
	})
}
