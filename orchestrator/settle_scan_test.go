package orchestrator_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/orchestrator"
	"github.com/executor-dev/executor/stagekind"
)

// countingTasks is the memory task store counting the task statuses read through Statuses.
type countingTasks struct {
	*memrepo.TaskRepo
	read atomic.Int64
}

func (c *countingTasks) Statuses(ctx context.Context, ids []string) ([]task.Status, error) {
	c.read.Add(int64(len(ids)))
	return c.TaskRepo.Statuses(ctx, ids)
}

// Settling a big plan whose tasks end one by one while most wait at a gate reads a few
// statuses per end, not the plan's every status: 20 tasks of a 5,000-task plan approved and
// ended one by one read fewer statuses than the plan has tasks (reading them all at each end
// was 100,000 reads here, and quadratic at 100,000 tenants). The plan still settles, with
// the right status, once every task ended.
func TestSettlingABigPlanDoesNotReadEveryTaskAtEachEnd(t *testing.T) {
	t.Parallel()
	db := memrepo.New()
	tasks := &countingTasks{TaskRepo: db.Tasks()}
	svc, _ := apptest.New(t, apptest.Stores{
		Creator: db, Plans: db.Plans(), Tasks: tasks, Checkpoints: db.Checkpoints(), Locker: lock.NewMemory(),
	}, stagekind.Builtin(stagekind.HTTPOptions{}), orchestrator.Config{Workers: 64, Logger: slog.New(slog.DiscardHandler)})
	ctx := context.Background()
	const n = 5000
	ids := make([]app.TenantInput, n)
	for i := range ids {
		ids[i] = app.TenantInput{ID: fmt.Sprintf("big-%04d", i)}
	}
	sub, err := svc.Submit(ctx, app.SubmitRequest{Tenants: ids, Stages: gated("go?"), MaxConcurrency: 500})
	require.NoError(t, err)
	planID := sub.Plan.Plan.ID()
	eventually(t, "every task waits at the gate", func() bool {
		s, err := svc.Summary(ctx, planID)
		return err == nil && s.Summary.Statuses[task.Waiting] == n
	})

	tasks.read.Store(0)
	for i := range 20 { // one at a time: each end settles the plan on its own
		tenant := fmt.Sprintf("big-%04d", i*97)
		_, err := svc.ApproveTenant(ctx, tenant, "")
		require.NoError(t, err)
		eventually(t, tenant+" completes", func() bool {
			v, err := svc.TenantTask(ctx, tenant)
			return err == nil && v.Task.Status() == task.Completed
		})
	}
	t.Logf("statuses read while 20 tasks ended one by one: %d", tasks.read.Load())
	assert.Less(t, tasks.read.Load(), int64(n), "statuses read while 20 tasks ended one by one")

	_, err = svc.BulkTasks(ctx, planID, app.BulkRequest{Action: app.BulkReject})
	require.NoError(t, err)
	v, err := svc.WaitPlan(ctx, planID, 0)
	require.NoError(t, err)
	eventually(t, "the plan settles once every task ended", func() bool {
		v, err = svc.Plan(ctx, planID)
		return err == nil && v.Plan.Status() == plan.Failed
	})
	assert.Equal(t, 20, v.Progress.Counts[task.Completed])
	assert.Equal(t, n-20, v.Progress.Counts[task.Failed])
}
