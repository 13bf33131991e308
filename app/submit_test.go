package app_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/orchestrator"
)

func newService(t *testing.T) *app.Service {
	t.Helper()
	db := memrepo.New()
	svc, _ := apptest.New(t, apptest.Stores{
		Creator: db, Plans: db.Plans(), Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Locker: lock.NewMemory(),
	}, nil, orchestrator.Config{})
	return svc
}

func sleepPlan(tenants ...string) app.SubmitRequest {
	req := app.SubmitRequest{Stages: []stage.Spec{{Name: "bake", Kind: "sleep", Params: map[string]any{"duration": "10s"}}}}
	for _, tn := range tenants {
		req.Tenants = append(req.Tenants, app.TenantInput{ID: tn})
	}
	return req
}

func countPlans(t *testing.T, svc *app.Service) int {
	t.Helper()
	plans, err := svc.ListPlans(context.Background(), plan.Filter{Limit: 1000})
	require.NoError(t, err)
	return len(plans)
}

func TestConcurrentSubmitsWithOneIdempotencyKeyCreateOnePlan(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	const n = 20
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := sleepPlan("idem-tenant")
			req.IdempotencyKey = "release-42"
			sub, err := svc.Submit(context.Background(), req)
			if assert.NoError(t, err) {
				ids[i] = sub.Plan.Plan.ID()
			}
		}()
	}
	wg.Wait()
	for _, id := range ids {
		assert.Equal(t, ids[0], id)
	}
	assert.Equal(t, 1, countPlans(t, svc))
}

func TestConcurrentSubmitsForOneTenantLetExactlyOneIn(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	const n = 20
	var wg sync.WaitGroup
	var mu sync.Mutex
	created, conflicts := 0, 0
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := svc.Submit(context.Background(), sleepPlan("shared-tenant", "other-"+fmt.Sprint(time.Now().UnixNano())))
			mu.Lock()
			defer mu.Unlock()
			var ce *app.ConflictError
			switch {
			case err == nil:
				created++
			case errors.As(err, &ce):
				conflicts++
				assert.Equal(t, []string{"shared-tenant"}, ce.Tenants)
			default:
				t.Errorf("unexpected error: %v", err)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 1, created)
	assert.Equal(t, n-1, conflicts)
	assert.Equal(t, 1, countPlans(t, svc))
}

func TestDryRunRendersAndCreatesNothing(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	req := app.SubmitRequest{
		DryRun: true,
		Stages: []stage.Spec{{Name: "bake", Kind: "sleep", Params: map[string]any{"duration": "{{.Params.d}}"}}},
		Tenants: []app.TenantInput{
			{ID: "dry-1", Params: map[string]any{"d": "1s"}},
			{ID: "dry-2", Params: map[string]any{"d": "2s"}},
		},
	}
	sub, err := svc.Submit(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, sub.Preview, 2)
	assert.Equal(t, "2s", sub.Preview[1].Stages[0].Params["duration"])
	assert.Equal(t, 0, countPlans(t, svc))
}

func TestSubmitNamesTheBadField(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	good := func() app.SubmitRequest {
		return app.SubmitRequest{
			Stages:  []stage.Spec{{Name: "push", Kind: "http", Params: map[string]any{"url": "http://127.0.0.1:1/{{.Params.v}}"}}},
			Tenants: []app.TenantInput{{ID: "f-1", Params: map[string]any{"v": "1"}}, {ID: "f-2", Params: map[string]any{"v": "2"}}},
		}
	}
	tests := []struct {
		name   string
		mutate func(*app.SubmitRequest)
		field  string
	}{
		{"tenant id with a brace", func(r *app.SubmitRequest) { r.Tenants[1].ID = "t{1}" }, "tenants[1].id"},
		{"tenant id with a colon", func(r *app.SubmitRequest) { r.Tenants[0].ID = "a:b" }, "tenants[0].id"},
		{"duplicate tenant", func(r *app.SubmitRequest) { r.Tenants[1].ID = "f-1" }, "tenants[1].id"},
		{"unknown kind", func(r *app.SubmitRequest) { r.Stages[0].Kind = "teleport" }, "stages[0].kind"},
		{"missing tenant param", func(r *app.SubmitRequest) { delete(r.Tenants[1].Params, "v") }, "stages[0].params.url"},
		{"template that does not parse", func(r *app.SubmitRequest) { r.Stages[0].Params["url"] = "http://x/{{.Params.v" }, "stages[0].params.url"},
		{"kind rejects rendered params", func(r *app.SubmitRequest) { r.Stages[0].Params["url"] = "ftp://x/{{.Params.v}}" }, "stages[0].params.url"},
		{"output of a later stage", func(r *app.SubmitRequest) {
			r.Stages[0].Params["url"] = `http://{{index .Outputs "later" "host"}}/`
		}, "stages[0].params.url"},
		{"concurrency too high", func(r *app.SubmitRequest) { r.MaxConcurrency = 1001 }, "maxConcurrency"},
		{"no tenants", func(r *app.SubmitRequest) { r.Tenants = nil }, "tenants"},
		{"bad stage name", func(r *app.SubmitRequest) { r.Stages[0].Name = "a b" }, "stages[0].name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := good()
			tc.mutate(&req)
			_, err := svc.Submit(context.Background(), req)
			require.ErrorIs(t, err, app.ErrInvalidInput)
			var ve *app.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, tc.field, ve.Violations[0].Field)
		})
	}
	assert.Equal(t, 0, countPlans(t, svc), "nothing was created")
}

// A submission refused because tenants have a task that has not ended names the plan and the
// status of the task holding each of the first ones, counts the rest, and says what to do;
// the dry run finds the same tasks.
func TestAConflictNamesThePlansHoldingTheTenantsAndWhatToDo(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := context.Background()
	tenants := make([]string, app.MaxConflictsNamed+3)
	for i := range tenants {
		tenants[i] = fmt.Sprintf("held-%d", i)
	}
	first, err := svc.Submit(ctx, sleepPlan(tenants...))
	require.NoError(t, err)
	holder := first.Plan.Plan.ID()

	_, err = svc.Submit(ctx, sleepPlan(append([]string{"free"}, tenants...)...))
	require.ErrorIs(t, err, app.ErrConflict)
	var ce *app.ConflictError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, tenants, ce.Tenants, "every conflicting tenant is listed")
	require.Len(t, ce.Holders, app.MaxConflictsNamed)
	assert.Equal(t, holder, ce.Holders[0].PlanID)
	msg := err.Error()
	assert.Contains(t, msg, "tenant held-0 (plan "+holder+", ")
	assert.Contains(t, msg, "tenant held-4 (plan "+holder+", ")
	assert.NotContains(t, msg, "held-5", "past the first ones, only counted")
	assert.Contains(t, msg, " and 3 more; wait until those tasks end, or cancel them: 'executor cancel --tenant held-0' for one tenant, "+
		"'executor plan bulk cancel "+holder+" --tenant PREFIX' for those of a plan")

	req := sleepPlan(tenants[:2]...)
	req.DryRun = true
	sub, err := svc.Submit(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, tenants[:2], sub.Conflicts)
	require.Len(t, sub.ConflictHolders, 2)
	assert.Equal(t, app.ConflictHolder{Tenant: "held-1", PlanID: holder, TaskID: sub.ConflictHolders[1].TaskID, Status: sub.ConflictHolders[1].Status}, sub.ConflictHolders[1])
	assert.False(t, sub.ConflictHolders[1].Status.Terminal())
}

// A maxConcurrency (the plan's, a wave's) above this executor's workers is capped by them: the
// submission says so, the created plan's and the dry run's alike; one that fits says nothing.
func TestAMaxConcurrencyAboveTheWorkersIsNoted(t *testing.T) {
	t.Parallel()
	svc := newService(t) // orchestrator.DefaultWorkers workers
	tests := []struct {
		name   string
		limit  int
		dryRun bool
		want   []string
	}{
		{"within the workers", orchestrator.DefaultWorkers, false, nil},
		{"above them", 500, false, []string{fmt.Sprintf("maxConcurrency 500 is above this executor's %d workers (serve --workers): "+
			"it runs at most %d of the plan's tasks at once, fewer while other plans run", orchestrator.DefaultWorkers, orchestrator.DefaultWorkers)}},
		{"above them, dry run", 500, true, []string{fmt.Sprintf("maxConcurrency 500 is above this executor's %d workers (serve --workers): "+
			"it runs at most %d of the plan's tasks at once, fewer while other plans run", orchestrator.DefaultWorkers, orchestrator.DefaultWorkers)}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := sleepPlan(fmt.Sprintf("mc-%d", i))
			req.MaxConcurrency, req.DryRun = tt.limit, tt.dryRun
			sub, err := svc.Submit(context.Background(), req)
			require.NoError(t, err)
			assert.Equal(t, tt.want, sub.Notes)
		})
	}
}
