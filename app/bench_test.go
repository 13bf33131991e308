package app_test

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/dispatch"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/orchestrator"
	"github.com/executor-dev/executor/stagekind"
)

// memExecutor wires a fresh executor on the in-memory store as apptest.New does, but with a
// stop of its own: a benchmark makes one per op, and stops it (waiting for its runs) before
// the next, so that no op's store or runs outlive it.
func memExecutor(b *testing.B) (*app.Service, func()) {
	b.Helper()
	db := memrepo.New()
	locker := lock.NewMemory()
	kinds := stagekind.Builtin(stagekind.HTTPOptions{})
	orch := orchestrator.New(db.Plans(), db.Tasks(), db.Checkpoints(), locker, kinds,
		orchestrator.Config{Logger: slog.New(slog.DiscardHandler), Queue: dispatch.ForMemory(dispatch.NewMemory(dispatch.MemoryOptions{}))})
	require.NoError(b, orch.Start(context.Background()))
	svc := app.New(app.Deps{
		Creator: db, Plans: db.Plans(), Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Index: db.Tasks(),
		Kinds: kinds, Holders: locker, Launcher: orch, PlanControl: orch, TaskControl: orch, Reaper: orch, Watcher: orch, Unlocker: orch,
	})
	return svc, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(b, orch.Stop(ctx))
	}
}

// BenchmarkSubmit10kTenants measures accepting a 10,000-tenant plan of one noop stage on the
// in-memory store: one op is one Submit (validation, rendering every tenant's stages, the
// tenants' conflict check and the plan's creation, the launch), into a fresh executor, as
// the executor bench's acceptance time does. Untimed between ops: the fresh executor is
// built, and after the Submit the plan is run to completion (it must complete) and the
// executor stopped, so no op's runs load the next one.
func BenchmarkSubmit10kTenants(b *testing.B) {
	const tenantCount = 10_000
	req := app.SubmitRequest{
		Name: "accept-bench", MaxConcurrency: 100,
		Stages:  []stage.Spec{{Name: "s1", Kind: stagekind.KindNoop}},
		Tenants: make([]app.TenantInput, tenantCount),
	}
	for i := range req.Tenants {
		req.Tenants[i] = app.TenantInput{ID: fmt.Sprintf("t-%05d", i)}
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		svc, stop := memExecutor(b)
		runtime.GC() // the previous op's executor is garbage: not this op's to collect
		b.StartTimer()

		sub, err := svc.Submit(ctx, req)

		b.StopTimer()
		require.NoError(b, err)
		require.Equal(b, tenantCount, sub.Plan.Progress.Total)
		require.Equal(b, tenantCount, sub.Plan.Progress.Counts[task.Pending])
		require.Len(b, sub.Plan.Plan.TaskIDs(), tenantCount)
		v, err := svc.WaitPlan(ctx, sub.Plan.Plan.ID(), app.MaxWait)
		require.NoError(b, err)
		require.Equal(b, plan.Completed, v.Plan.Status())
		require.Equal(b, tenantCount, v.Progress.Counts[task.Completed])
		stop()
		b.StartTimer()
	}
	b.ReportMetric(float64(tenantCount), "tenants/op")
}
