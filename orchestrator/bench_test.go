package orchestrator_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/infra/repotest"
	"github.com/executor-dev/executor/orchestrator"
)

// BenchmarkNoopPlan measures the orchestrator's own overhead: one op is a plan of 100 tenants
// × 10 noop stages submitted and run to completion on the in-memory store (64 workers, plan
// concurrency 100, as the executor bench's defaults), so every cost is scheduling, leases,
// task transitions and store writes, none is Redis or stage work. transitions/s is stage
// transitions (tenants × stages) per second of wall time.
func BenchmarkNoopPlan(b *testing.B) {
	const tenantCount, stageCount = 100, 10
	db := memrepo.New()
	svc, _ := apptest.New(b, apptest.Stores{
		Creator: db, Plans: db.Plans(), Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Locker: lock.NewMemory(),
	}, nil, orchestrator.Config{Workers: orchestrator.DefaultWorkers, Logger: slog.New(slog.DiscardHandler)})
	specs := repotest.NoopStages(stageCount)
	// The same tenants every op: each plan's tasks have all ended before the next is submitted.
	tenants := make([]app.TenantInput, tenantCount)
	for i := range tenants {
		tenants[i] = app.TenantInput{ID: fmt.Sprintf("noop-%03d", i)}
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		sub, err := svc.Submit(ctx, app.SubmitRequest{Name: "noop-bench", MaxConcurrency: tenantCount, Stages: specs, Tenants: tenants})
		require.NoError(b, err)
		v, err := svc.WaitPlan(ctx, sub.Plan.Plan.ID(), app.MaxWait)
		require.NoError(b, err)
		require.Equal(b, plan.Completed, v.Plan.Status())
		require.Equal(b, tenantCount, v.Progress.Counts[task.Completed])
	}
	b.ReportMetric(float64(tenantCount*stageCount), "transitions/op")
	b.ReportMetric(float64(tenantCount*stageCount*b.N)/b.Elapsed().Seconds(), "transitions/s")
}
