package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/domain/availability"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/orchestrator"
	"github.com/executor-dev/executor/stagekind"
)

// A command on many tasks asks the store once whether the executors have written back what
// they held after a loss of Redis's data (Deps.Settled), not once per task; while they have
// not, it is refused whole, nothing retried.
func TestABulkRetryAsksWhetherSettledOnce(t *testing.T) {
	t.Parallel()
	db := memrepo.New()
	kinds := stagekind.Builtin(stagekind.HTTPOptions{})
	require.NoError(t, kinds.Register("broken", stage.HandlerFunc(func(context.Context, stage.Request) (json.RawMessage, error) {
		return nil, stage.Permanent(errors.New("bad config"))
	})))
	var asked atomic.Int64
	var paused atomic.Bool
	st := apptest.Stores{Creator: db, Plans: db.Plans(), Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Locker: lock.NewMemory()}
	svc, _ := apptest.NewWith(t, st, kinds, orchestrator.Config{}, func(d *app.Deps, _ *orchestrator.Orchestrator) {
		d.Availability = availability.Func(func() availability.State { return availability.State{Shared: true, Reached: true} })
		d.Settled = func(context.Context) error {
			asked.Add(1)
			if paused.Load() {
				return &task.ClaimsPausedError{Reason: "redis lost its data lately"}
			}
			return nil
		}
	})
	ctx := context.Background()
	req := sleepPlan("so-1", "so-2", "so-3", "so-4", "so-5")
	req.Stages[0].Kind, req.Stages[0].Params = "broken", nil
	sub, err := svc.Submit(ctx, req)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		v, err := svc.WaitPlan(ctx, sub.Plan.Plan.ID(), time.Second)
		return err == nil && v.Progress.Counts[task.Failed] == 5
	}, 20*time.Second, 10*time.Millisecond, "every task failed")

	paused.Store(true)
	_, err = svc.RetryPlan(ctx, sub.Plan.Plan.ID(), app.RetryPlanRequest{})
	require.ErrorIs(t, err, task.ErrClaimsPaused)
	paused.Store(false)
	asked.Store(0)
	out, err := svc.RetryPlan(ctx, sub.Plan.Plan.ID(), app.RetryPlanRequest{})
	require.NoError(t, err)
	assert.Len(t, out.Retried, 5)
	assert.EqualValues(t, 1, asked.Load(), "once for the command, not once per task")
}
