package orchestrator_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/infra/redistest"
)

// Redis restarts empty while b runs the first task of a plan a created, a cut off from Redis
// meanwhile (it holds the plan's other tasks, PENDING). b writes its copies back and its task
// ends: the plan's other tasks are missing from Redis, but only because a has not written
// them back yet. b does not settle the plan FAILED for them (chaos found such a plan FAILED
// with two tasks PENDING for good: a's write-back lost to the FAILED plan): once a is back,
// its copies return, the tasks run and the plan completes.
func TestTasksMissingRightAfterADataLossDoNotFailThePlan(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	proxy := srv.NewProxy()
	a := newNode(t, nodeOptions{name: "a", storeAddr: proxy.Addr(), queueAddr: srv.Addr(), idle: true, settleFromRedis: true, leaseTTL: 2 * time.Second})
	b := newNode(t, nodeOptions{name: "b", storeAddr: srv.Addr(), queueAddr: srv.Addr(), workers: 1, settleFromRedis: true, leaseTTL: 2 * time.Second})
	a.hold(t, "hold")
	release := b.hold(t, "hold")
	t.Cleanup(release)
	ctx := context.Background()

	p := a.submit(t, app.SubmitRequest{MaxConcurrency: 1, Tenants: tenants("ml", 3), Stages: stages("hold", "one")})
	eventually(t, "b runs the first task", func() bool { return b.holding.Load() == 1 })
	proxy.Cut()
	_, _ = a.svc.Plan(ctx, p.ID()) // a read that fails: a runs degraded
	require.True(t, a.degraded())
	require.NoError(t, srv.Client().FlushAll(ctx).Err())
	_, _ = b.svc.Plan(ctx, p.ID()) // a read that finds the plan gone: b sees the loss
	eventually(t, "b wrote its copies back", func() bool {
		return !b.degraded() && srv.Client().Exists(ctx, "executor:generation").Val() == 1
	})
	release() // b's task ends: the plan's other two are missing from Redis
	eventually(t, "b's task completed", func() bool {
		v, err := b.svc.TenantTask(ctx, "ml-000")
		return err == nil && v.Task.Status().Terminal()
	})
	require.Never(t, func() bool { return b.planStatus(t, p.ID()).Terminal() }, 500*time.Millisecond, 20*time.Millisecond,
		"b does not settle the plan for tasks a has not written back yet")

	proxy.Restore()
	eventually(t, "a writes back, the tasks run, the plan completes", func() bool {
		return b.planStatus(t, p.ID()) == plan.Completed
	})
}
