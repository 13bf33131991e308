package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/stagekind"
	"github.com/executor-dev/executor/wire"
)

// listedIDs follows every page of a listing and returns the tenants in the order listed,
// checking each page's total.
func listedIDs(t *testing.T, base, planID, query string, total int) []string {
	t.Helper()
	var out []string
	for _, pg := range pageAll(t, base, planID, query) {
		assert.Equal(t, total, pg.Total, "every page counts the matching tasks")
		out = append(out, tenantIDs(pg.Tasks)...)
	}
	return out
}

// GET /v1/plans/{id}/tasks filters by status (a list), stage (name or index), failure class
// and tenant prefix, in plan or tenant order: each listing, paged 7 at a time, equals the
// unfiltered listing filtered here.
func TestPlanTasksFilters(t *testing.T) {
	t.Parallel()
	base := startServer(t, func(r *stagekind.Registry) {
		require.NoError(t, r.Register("somefail", stage.HandlerFunc(someFail)))
	})
	const n = 60
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("flt-%02d", (i*37)%n) // submission order is not tenant order
	}
	p := submit(t, base, wire.PlanRequest{Name: "filters", Tenants: tenants(ids...), MaxConcurrency: 8,
		Stages: []wire.StageRequest{noop("prep"),
			{Name: "deploy", Kind: "somefail", Retry: &wire.RetryRequest{MaxAttempts: 1}},
			approval("gate", "ship?"), noop("after")}})
	eventuallySummary(t, base, p.PlanID, func(s wire.PlanSummary) bool { return s.Statuses["WAITING"]+s.Statuses["FAILED"] == n })

	all := planTaskPage(t, base, p.PlanID, "").Tasks
	require.Len(t, all, n)
	byTenant := slices.Clone(all)
	slices.SortFunc(byTenant, func(a, b wire.Task) int { return strings.Compare(a.TenantID, b.TenantID) })
	pick := func(tasks []wire.Task, keep func(wire.Task) bool) []string {
		var out []string
		for _, tk := range tasks {
			if keep(tk) {
				out = append(out, tk.TenantID)
			}
		}
		return out
	}
	class := func(tk wire.Task) string {
		if tk.LastError == nil {
			return ""
		}
		return tk.LastError.Class
	}
	reversed := func(s []string) []string { s = slices.Clone(s); slices.Reverse(s); return s }
	everyTask := func(wire.Task) bool { return true }
	tests := []struct {
		name  string
		query string
		want  []string
	}{
		{"every task", "", pick(all, everyTask)},
		{"a status list", "status=failed,Waiting", pick(all, everyTask)},
		{"one status", "status=FAILED", pick(all, func(tk wire.Task) bool { return tk.Status == "FAILED" })},
		{"a stage by name", "stage=gate", pick(all, func(tk wire.Task) bool { return tk.CurrentStage == 2 })},
		{"a stage by index", "stage=1", pick(all, func(tk wire.Task) bool { return tk.CurrentStage == 1 })},
		{"past the last stage", "stage=4", nil},
		{"a failure class", "class=permanent", pick(all, func(tk wire.Task) bool { return class(tk) == "permanent" })},
		{"a tenant prefix", "tenant=flt-1", pick(all, func(tk wire.Task) bool { return strings.HasPrefix(tk.TenantID, "flt-1") })},
		{"filters together", "status=FAILED&stage=deploy&tenant=flt-", pick(all, func(tk wire.Task) bool {
			return tk.Status == "FAILED" && tk.CurrentStage == 1
		})},
		{"last first", "sort=-order", reversed(pick(all, everyTask))},
		{"tenant order", "sort=tenant", pick(byTenant, everyTask)},
		{"tenant order, descending, filtered", "sort=-tenant&status=WAITING", reversed(pick(byTenant, waiting))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q := tc.query
			if q != "" {
				q += "&"
			}
			assert.Equal(t, tc.want, listedIDs(t, base, p.PlanID, q+"limit=7", len(tc.want)))
		})
	}
	require.NotEmpty(t, pick(all, func(tk wire.Task) bool { return class(tk) == "permanent" }), "the test has failures")

	bad := []struct{ name, query, field string }{
		{"unknown stage", "stage=nope", "stage"},
		{"stage index out of range", "stage=5", "stage"},
		{"unknown status in a list", "status=FAILED,BOGUS", "status"},
		{"unknown sort", "sort=age", "sort"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			requireProblem(t, get(t, base+"/v1/plans/"+p.PlanID+"/tasks?"+tc.query), http.StatusBadRequest, tc.field)
		})
	}
	t.Run("a cursor of another sort", func(t *testing.T) {
		t.Parallel()
		first := planTaskPage(t, base, p.PlanID, "?limit=5&sort=tenant")
		require.NotEmpty(t, first.NextCursor)
		requireProblem(t, get(t, base+"/v1/plans/"+p.PlanID+"/tasks?limit=5&cursor="+url.QueryEscape(first.NextCursor)),
			http.StatusBadRequest, "cursor")
	})
}

// Paging in any order while tasks change status lists each task exactly once: between two
// pages, a bulk approval moves a tenth of the plan (ahead of and behind the cursor) from
// WAITING on to COMPLETED.
func TestPlanTasksCursorWhileStatusesChange(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	const n = 1000
	for _, sort := range []string{"order", "-order", "tenant", "-tenant"} {
		t.Run(sort, func(t *testing.T) {
			t.Parallel()
			ids := make([]string, n)
			for i := range ids {
				ids[i] = fmt.Sprintf("chg-%s-%03d", sort, (i*389)%n)
			}
			p := submit(t, base, wire.PlanRequest{Tenants: tenants(ids...), MaxConcurrency: 50,
				Stages: []wire.StageRequest{noop("a"), approval("gate", "go?"), sleep("b", "1ms")}})
			eventuallySummary(t, base, p.PlanID, statusCount("WAITING", n))
			var got []string
			statuses := map[string]bool{}
			page := planTaskPage(t, base, p.PlanID, "?limit=100&sort="+sort)
			for i := 0; ; i++ {
				got = append(got, tenantIDs(page.Tasks)...)
				for _, tk := range page.Tasks {
					statuses[tk.Status] = true
				}
				if page.NextCursor == "" {
					break
				}
				require.Less(t, i, 20, "paging does not end")
				res := decode[wire.BulkResult](t, postJSON(t, base+"/v1/plans/"+p.PlanID+"/tasks/approve",
					wire.BulkTasksBody{Tenant: fmt.Sprintf("chg-%s-%d", sort, (i*7+5)%10)}), http.StatusOK) // ahead and behind
				require.Equal(t, 100, res.Applied, "a tenth of the plan moves on")
				page = planTaskPage(t, base, p.PlanID, "?limit=100&sort="+sort+"&cursor="+url.QueryEscape(page.NextCursor))
			}
			assert.ElementsMatch(t, ids, got, "every task exactly once")
			assert.True(t, statuses["WAITING"], "some tasks were listed WAITING")
			assert.Greater(t, len(statuses), 1, "and others after they moved on: %v", statuses)
		})
	}
}
