package app_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/domain/availability"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/orchestrator"
)

// Before the executor reached Redis every query of plans, tasks, tenants and checkpoints
// answers ErrNotReadyToRead (which is an ErrNotReady), whether what it names exists or not;
// malformed input is still a validation error first. Once Redis was reached they answer.
func TestQueriesRefusedUntilRedisReached(t *testing.T) {
	t.Parallel()
	db := memrepo.New()
	st := apptest.Stores{Creator: db, Plans: db.Plans(), Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Locker: lock.NewMemory()}
	var notReady atomic.Bool
	svc, _ := apptest.NewWith(t, st, nil, orchestrator.Config{}, func(d *app.Deps, _ *orchestrator.Orchestrator) {
		d.Availability = availability.Func(func() availability.State {
			return availability.State{Shared: true, Reached: !notReady.Load()}
		})
	})
	ctx := context.Background()
	sub, err := svc.Submit(ctx, sleepPlan("nr-1"))
	require.NoError(t, err)
	planID, taskID := sub.Plan.Plan.ID(), sub.Plan.Plan.TaskIDs()[0]

	notReady.Store(true)
	queries := []struct {
		name string
		call func() error
	}{
		{"plan", func() error { _, err := svc.Plan(ctx, planID); return err }},
		{"plan nobody submitted", func() error { _, err := svc.Plan(ctx, ulid.Make().String()); return err }},
		{"plan, long poll", func() error { _, err := svc.WaitPlan(ctx, planID, time.Second); return err }},
		{"plan list", func() error { _, err := svc.ListPlans(ctx, plan.Filter{}); return err }},
		{"plan tasks", func() error { _, err := svc.PlanTasks(ctx, planID, app.TaskQuery{}); return err }},
		{"task", func() error { _, err := svc.Task(ctx, taskID); return err }},
		{"task, long poll", func() error { _, err := svc.WaitTask(ctx, taskID, time.Second); return err }},
		{"tenant task", func() error { _, err := svc.TenantTask(ctx, "nr-1"); return err }},
		{"tenant task, long poll", func() error { _, err := svc.WaitTenantTask(ctx, "nr-1", time.Second); return err }},
		{"tenant without a task", func() error { _, err := svc.TenantTask(ctx, "nobody"); return err }},
		{"tenant checkpoint", func() error { _, err := svc.TenantCheckpoint(ctx, "nr-1"); return err }},
		{"tenant lock", func() error { _, err := svc.TenantLock(ctx, "nr-1"); return err }},
	}
	for _, q := range queries {
		err := q.call()
		require.ErrorIs(t, err, app.ErrNotReady, q.name)
		require.ErrorIs(t, err, app.ErrNotReadyToRead, q.name)
	}
	_, err = svc.Plan(ctx, "not-a-ulid")
	require.ErrorIs(t, err, app.ErrInvalidInput, "validation comes first")

	notReady.Store(false)
	v, err := svc.Plan(ctx, planID)
	require.NoError(t, err)
	require.Equal(t, planID, v.Plan.ID())
	_, err = svc.TenantTask(ctx, "nr-1")
	require.NoError(t, err)
	_, err = svc.CancelPlan(ctx, planID)
	require.NoError(t, err)
}
