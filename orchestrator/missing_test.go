package orchestrator_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redistest"
)

// A plan one of whose tasks Redis lost (it restarted empty and no executor held a copy to
// write back) is not stuck: it is cancelled without that task, and it settles from the
// others, FAILED (the lost task did not complete).
func TestAPlanWithALostTaskIsCancelledAndSettles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		end  func(t *testing.T, n *node, planID string, release func())
		want plan.Status
	}{
		{"cancelled", func(t *testing.T, n *node, planID string, _ func()) {
			_, err := n.svc.CancelPlan(context.Background(), planID)
			require.NoError(t, err)
		}, plan.Cancelled},
		{"settled", func(t *testing.T, _ *node, _ string, release func()) { release() }, plan.Failed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			creator := newNode(t, nodeOptions{name: "creator", storeAddr: srv.Addr(), queueAddr: srv.Addr(), idle: true})
			creator.hold(t, "hold")
			b := newNode(t, nodeOptions{name: "b", storeAddr: srv.Addr(), queueAddr: srv.Addr(), workers: 1})
			release := b.hold(t, "hold")
			t.Cleanup(release)
			ctx := context.Background()
			p := creator.submit(t, app.SubmitRequest{MaxConcurrency: 1, Tenants: tenants("mt", 2), Stages: stages("hold", "one")})
			eventually(t, "b runs the first task", func() bool {
				v, err := b.svc.TenantTask(ctx, "mt-000")
				return err == nil && v.Task.Status() == task.Running
			})
			require.NoError(t, srv.Client().Del(ctx, rediskey.New("").Task(p.TaskIDs()[1])).Err(), "the second task is lost")

			tc.end(t, b, p.ID(), release)
			eventually(t, "the plan ends", func() bool {
				v, err := b.svc.Plan(ctx, p.ID())
				return err == nil && v.Plan.Status() == tc.want
			})
		})
	}
}
