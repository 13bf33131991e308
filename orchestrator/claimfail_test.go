package orchestrator_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/infra/redistest"
)

// A task claimed from Redis that the executor then cannot read (its store's Redis is away, and
// its mirror never held the task: another executor created it) is handed back to the front of
// its plan's queue, not dropped: it runs once the executor reaches Redis again.
func TestAClaimedTaskThatCannotBeReadIsHandedBack(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	proxy := srv.NewProxy()
	creator := newNode(t, nodeOptions{name: "creator", storeAddr: srv.Addr(), queueAddr: srv.Addr(), idle: true})
	// a claims from Redis directly, and reads and writes its tasks through the proxy.
	a := newNode(t, nodeOptions{name: "a", storeAddr: proxy.Addr(), queueAddr: srv.Addr(), workers: 1})
	proxy.Cut()

	p := creator.submit(t, app.SubmitRequest{Tenants: tenants("cf", 1), Stages: stages("noop", "one")})
	ctx := context.Background()
	eventually(t, "a claimed the task, failed to read it and went degraded", func() bool {
		_, inflight, err := a.queue.Len(ctx, p.ID())
		return err == nil && inflight == 0 && a.degraded()
	})
	queued, inflight, err := a.queue.Len(ctx, p.ID())
	require.NoError(t, err)
	require.Equal(t, [2]int{1, 0}, [2]int{queued, inflight}, "the task is back in its plan's queue")

	proxy.Restore()
	eventually(t, "the plan completes once a reaches Redis again", func() bool {
		return creator.planStatus(t, p.ID()) == plan.Completed
	})
}
