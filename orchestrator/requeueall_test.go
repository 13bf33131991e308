package orchestrator_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redistest"
)

// After Redis lost its data, every executor queues again the PENDING tasks of every plan that
// has not ended: the same tasks on every executor. When the shared queue fails then, they are
// not queued in the executor's Fallback (two executors would both run them, each on its own
// memory lease): the push is made again once the queue answers, and each task runs once.
func TestTasksQueuedAgainAfterADataLossNeverGoToTheFallback(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	proxy := srv.NewProxy()
	a := newNode(t, nodeOptions{name: "a", storeAddr: srv.Addr(), queueAddr: srv.Addr(), idle: true})
	t.Cleanup(a.hold(t, "hold")) // a takes no work: only the kind must be known to submit
	ctx := context.Background()
	p := a.submit(t, app.SubmitRequest{Tenants: tenants("rq", 2), Stages: stages("hold", "one")})

	// The queue lost the plan's tasks (its keys are gone), the plan and its tasks are there.
	keys := rediskey.New("")
	require.NoError(t, srv.Client().Del(ctx, keys.DispatchQueue(p.ID()), keys.DispatchInFlight(p.ID()), keys.Dispatch(p.ID())).Err())
	require.NoError(t, srv.Client().SRem(ctx, keys.Dispatching(), p.ID()).Err())

	b := newNode(t, nodeOptions{name: "b", storeAddr: srv.Addr(), queueAddr: proxy.Addr(), workers: 2})
	release := b.hold(t, "hold")
	t.Cleanup(release)
	proxy.Cut()
	b.orch.Restored(true)
	queued, claimed, err := b.fallback.Len(ctx, p.ID())
	require.NoError(t, err)
	require.Zero(t, queued+claimed, "the tasks every executor queues again are not queued in the Fallback")

	proxy.Restore()
	eventually(t, "the push is made again: the tasks are claimed from Redis", func() bool {
		_, inflight, err := b.queue.Len(ctx, p.ID())
		return err == nil && inflight == 2
	})
	release()
	eventually(t, "the plan completes", func() bool { return b.planStatus(t, p.ID()) == plan.Completed })
}
