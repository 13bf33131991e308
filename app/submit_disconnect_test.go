package app_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/orchestrator"
	"github.com/executor-dev/executor/stagekind"
)

// disconnectingCreator is the store's creator with the submission's client going away
// around the creation: before it (as the creation begins) or right after it returned (between
// the creation and the launch).
type disconnectingCreator struct {
	app.Creator
	cancel context.CancelFunc
	after  bool
}

func (c disconnectingCreator) CreatePlan(ctx context.Context, p *plan.Plan, tasks []*task.Task) error {
	if !c.after {
		c.cancel()
	}
	err := c.Creator.CreatePlan(ctx, p, tasks)
	if c.after {
		c.cancel()
	}
	return err
}

// A submission whose client goes away once the plan's creation began still creates and
// launches the plan: its tasks run and it completes, rather than staying PENDING with its
// tenants claimed.
func TestSubmitCompletesWhenTheClientGoesAwayMidCreation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		after bool
	}{
		{"gone as the creation begins", false},
		{"gone between the creation and the launch", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := redisStores(t)
			svc, orch := apptest.New(t, st, nil, orchestrator.Config{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sub := app.New(app.Deps{
				Creator: disconnectingCreator{Creator: st.Creator, cancel: cancel, after: tc.after},
				Plans:   st.Plans, Tasks: st.Tasks, Checkpoints: st.Checkpoints, Index: st.Tasks.(app.PlanIndex),
				Kinds: stagekind.Builtin(stagekind.HTTPOptions{}), Holders: st.Locker, Launcher: orch, PlanControl: orch, TaskControl: orch, Reaper: orch, Watcher: orch, Unlocker: orch,
			})
			req := app.SubmitRequest{
				Stages:  []stage.Spec{{Name: "check", Kind: "noop"}},
				Tenants: []app.TenantInput{{ID: "gone-1"}, {ID: "gone-2"}},
			}
			created, err := sub.Submit(ctx, req)
			require.NoError(t, err)
			require.Error(t, ctx.Err(), "the client went away during the submission")

			v, err := svc.WaitPlan(context.Background(), created.Plan.Plan.ID(), 10*time.Second)
			require.NoError(t, err)
			require.Equal(t, plan.Completed, v.Plan.Status())
			require.Equal(t, 2, v.Progress.Counts[task.Completed])
		})
	}
}

// errLaunchRefused is failingLauncher's launch error.
var errLaunchRefused = errors.New("launch refused")

// failingLauncher is the real orchestrator whose launches fail.
type failingLauncher struct{ app.Launcher }

func (failingLauncher) Launch(context.Context, *plan.Plan) error { return errLaunchRefused }

// A plan created but not launched is cancelled: it does not stay PENDING holding its
// tenants, which a later plan can take.
func TestSubmitCancelsAPlanItCouldNotLaunch(t *testing.T) {
	t.Parallel()
	db := memrepo.New()
	st := apptest.Stores{Creator: db, Plans: db.Plans(), Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Locker: lock.NewMemory()}
	svc, orch := apptest.New(t, st, nil, orchestrator.Config{})
	failing := app.New(app.Deps{
		Creator: st.Creator, Plans: st.Plans, Tasks: st.Tasks, Checkpoints: st.Checkpoints, Index: st.Tasks.(app.PlanIndex),
		Kinds: stagekind.Builtin(stagekind.HTTPOptions{}), Holders: st.Locker, Launcher: failingLauncher{orch}, PlanControl: orch, TaskControl: orch, Reaper: orch, Watcher: orch, Unlocker: orch,
	})
	ctx := context.Background()

	_, err := failing.Submit(ctx, sleepPlan("unlaunched-1"))
	require.ErrorIs(t, err, errLaunchRefused)
	plans, err := svc.ListPlans(ctx, plan.Filter{})
	require.NoError(t, err)
	require.Len(t, plans, 1)
	require.Equal(t, plan.Cancelled, plans[0].Plan.Status())
	require.Equal(t, 1, plans[0].Progress.Counts[task.Cancelled])

	_, err = svc.Submit(ctx, sleepPlan("unlaunched-1"))
	require.NoError(t, err, "the tenant is free again")
}
