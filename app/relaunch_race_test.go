package app_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/orchestrator"
)

// relaunchFirst is a Launcher whose Launch meets a plan another submission's replay has just
// relaunched: the race of two submissions with one Idempotency-Key, the replay's Relaunch
// starting the plan between the first submission's creation and its own launch.
type relaunchFirst struct{ *orchestrator.Orchestrator }

func (l relaunchFirst) Launch(ctx context.Context, p *plan.Plan) error {
	if err := l.Relaunch(ctx, p.ID()); err != nil {
		return err
	}
	return l.Orchestrator.Launch(ctx, p)
}

// A submission whose plan a concurrent replay launched first is not an error: the plan runs,
// and is never cancelled as a launch that failed (TestConcurrentSubmitsWithOneIdempotencyKey
// CreateOnePlan met it: "cannot start a RUNNING plan", then its plan CANCELLED).
func TestALaunchThatARelaunchWonKeepsThePlanRunning(t *testing.T) {
	t.Parallel()
	db := memrepo.New()
	st := apptest.Stores{Creator: db, Plans: db.Plans(), Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Locker: lock.NewMemory()}
	svc, _ := apptest.NewWith(t, st, nil, orchestrator.Config{}, func(d *app.Deps, orch *orchestrator.Orchestrator) {
		d.Launcher = relaunchFirst{orch}
	})
	sub, err := svc.Submit(context.Background(), sleepPlan("race-1"))
	require.NoError(t, err, "the plan was launched, by the relaunch")
	require.Equal(t, plan.Running, sub.Plan.Plan.Status())
	got, err := db.Plans().Plan(context.Background(), sub.Plan.Plan.ID())
	require.NoError(t, err)
	require.Equal(t, plan.Running, got.Status(), "not cancelled as a failed launch")
}
