package orchestrator_test

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/infra/redistest"
)

// A push whose script queued the tasks in Redis but whose last step failed (the plan's SADD to
// the active set never reaches Redis) is ambiguous to the executor: the tasks are not queued
// in its Fallback as well (they would be claimed from both, their tenants run twice at once),
// and the push is made again once Redis answers: the task runs once, from Redis.
func TestAPushThatFailedAfterQueueingIsNotQueuedHereToo(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var failMarks atomic.Bool
	proxy := srv.NewFaultProxy(redistest.Faults{Rule: func(chunk []byte) redistest.Fault {
		if failMarks.Load() && bytes.Contains(bytes.ToLower(chunk), []byte("sadd")) && bytes.Contains(chunk, []byte("dispatching")) {
			return redistest.Fault{Kind: redistest.Drop}
		}
		return redistest.Fault{}
	}})
	proxy.Inject(true)
	a := newNode(t, nodeOptions{name: "a", storeAddr: proxy.Addr(), queueAddr: proxy.Addr(), workers: 1})
	release := a.hold(t, "hold")
	t.Cleanup(release)
	ctx := context.Background()

	failMarks.Store(true)
	p := a.submit(t, app.SubmitRequest{Tenants: tenants("pl", 1), Stages: stages("hold", "one")})
	inRedis, _, err := a.queue.Len(ctx, p.ID())
	require.NoError(t, err)
	require.Equal(t, 1, inRedis, "the push's script queued the task in Redis")
	queued, claimed, err := a.fallback.Len(ctx, p.ID())
	require.NoError(t, err)
	require.Zero(t, queued+claimed, "a task queued in Redis is not queued in the Fallback as well")

	failMarks.Store(false)
	eventually(t, "the push is made again: the task is claimed from Redis", func() bool {
		_, inflight, err := a.queue.Len(ctx, p.ID())
		return err == nil && inflight == 1
	})
	release()
	eventually(t, "the plan completes", func() bool { return a.planStatus(t, p.ID()) == plan.Completed })
	queued, claimed, err = a.fallback.Len(ctx, p.ID())
	require.NoError(t, err)
	require.Zero(t, queued+claimed)
	inRedis, inflight, err := a.queue.Len(ctx, p.ID())
	require.NoError(t, err)
	require.Zero(t, inRedis+inflight, "nothing of the plan is left queued in Redis")
}
