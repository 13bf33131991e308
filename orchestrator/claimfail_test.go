package orchestrator_test

import (
	"context"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/infra/redisrepo"
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

// Shared: a claimed task whose start cannot reach Redis (its fence bumps are lost in the
// network for longer than a write waits) is handed back to its plan's queue, not dropped (it
// was: PENDING, in no queue, stranded): it runs once its start gets through.
func TestATaskWhoseStartCannotReachRedisIsHandedBack(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	bump := regexp.MustCompile(`(?is)evalsha\r\n\$40\r\n[0-9a-f]{40}\r\n\$1\r\n1\r\n\$\d+\r\nexecutor:task:\{`)
	var blocked atomic.Bool
	var dropped atomic.Int64
	blocked.Store(true)
	proxy := srv.NewFaultProxy(redistest.Faults{Rule: func(chunk []byte) redistest.Fault {
		if blocked.Load() && bump.Match(chunk) {
			dropped.Add(1)
			return redistest.Fault{Kind: redistest.Drop}
		}
		return redistest.Fault{}
	}})
	proxy.Inject(true)
	creator := newNode(t, nodeOptions{name: "creator", storeAddr: srv.Addr(), queueAddr: srv.Addr(), idle: true, shared: true})
	newNode(t, nodeOptions{name: "a", storeAddr: proxy.Addr(), queueAddr: srv.Addr(), workers: 1, shared: true, leaseTTL: 3 * time.Second})

	p := creator.submit(t, app.SubmitRequest{Tenants: tenants("sf", 1), Stages: stages("noop", "one")})
	eventually(t, "a tried to start the task", func() bool { return dropped.Load() > 0 })
	time.Sleep(redisrepo.SharedWriteWait + time.Second) // past the start's wait for Redis
	blocked.Store(false)
	eventually(t, "the plan completes once the task's start gets through", func() bool {
		return creator.planStatus(t, p.ID()) == plan.Completed
	})
}
