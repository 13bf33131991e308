package app_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/domain/availability"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/orchestrator"
)

// elsewhereRunner is the real orchestrator, but for whether it runs a task: the test says.
type elsewhereRunner struct {
	app.TaskControl
	here *atomic.Bool
}

func (r elsewhereRunner) Runs(taskID string) bool { return r.here.Load() && r.TaskControl.Runs(taskID) }

// While degraded where other executors share its Redis, an executor refuses (ErrDegraded)
// the commands it cannot make take effect: a cancel or pause of a task it does not run (the
// run elsewhere would go on), a retry, a resume, a plan-wide command. A cancel of a task it
// runs takes effect. Nothing is changed by a refused command.
func TestDegradedExecutorActsOnlyOnWhatItRuns(t *testing.T) {
	t.Parallel()
	db := memrepo.New()
	st := apptest.Stores{Creator: db, Plans: db.Plans(), Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Locker: lock.NewMemory()}
	var degraded, here atomic.Bool
	svc, _ := apptest.NewWith(t, st, nil, orchestrator.Config{}, func(d *app.Deps, orch *orchestrator.Orchestrator) {
		d.TaskControl = elsewhereRunner{TaskControl: orch, here: &here}
		d.Availability = sharedDegraded(degraded.Load)
	})
	ctx := context.Background()
	sub, err := svc.Submit(ctx, sleepPlan("dg-1", "dg-2"))
	require.NoError(t, err)
	planID := sub.Plan.Plan.ID()
	require.Eventually(t, func() bool {
		for _, tn := range []string{"dg-1", "dg-2"} {
			v, err := svc.TenantTask(ctx, tn)
			if err != nil || v.Task.Status() != task.Running {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond)

	degraded.Store(true)
	refused := []struct {
		name string
		call func() error
	}{
		{"cancel of a task running elsewhere", func() error { _, err := svc.CancelTenant(ctx, "dg-1"); return err }},
		{"pause of a task running elsewhere", func() error { _, err := svc.PauseTenant(ctx, "dg-1"); return err }},
		{"retry", func() error { _, err := svc.RetryTenant(ctx, "dg-1", true); return err }},
		{"plan cancel", func() error { _, err := svc.CancelPlan(ctx, planID); return err }},
		{"plan pause", func() error { _, err := svc.PausePlan(ctx, planID); return err }},
		{"plan resume", func() error { _, err := svc.ResumePlan(ctx, planID, false); return err }},
	}
	for _, tc := range refused {
		require.ErrorIs(t, tc.call(), app.ErrDegraded, tc.name)
	}
	for _, tn := range []string{"dg-1", "dg-2"} {
		v, err := svc.TenantTask(ctx, tn)
		require.NoError(t, err)
		require.Equal(t, task.Running, v.Task.Status(), "refused commands changed nothing")
		require.False(t, v.Task.PauseRequested())
	}
	p, err := svc.Plan(ctx, planID)
	require.NoError(t, err)
	require.Equal(t, plan.Running, p.Plan.Status())

	here.Store(true)
	v, err := svc.CancelTenant(ctx, "dg-2")
	require.NoError(t, err, "a task running here is cancelled while degraded")
	require.Equal(t, task.Cancelled, v.Task.Status())

	degraded.Store(false)
	v, err = svc.CancelTenant(ctx, "dg-1")
	require.NoError(t, err)
	require.Equal(t, task.Cancelled, v.Task.Status())
}

// sharedDegraded is the availability of a shared executor that reached Redis, degraded while
// degraded says so.
func sharedDegraded(degraded func() bool) availability.Func {
	return func() availability.State {
		return availability.State{Shared: true, Reached: true, Degraded: degraded()}
	}
}
