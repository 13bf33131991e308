package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/wire"
)

// bulk posts an action on a filter and returns its answer.
func bulk(t *testing.T, base, planID, action string, body wire.BulkTasksBody) wire.BulkResult {
	t.Helper()
	return decode[wire.BulkResult](t, postJSON(t, base+"/v1/plans/"+planID+"/tasks/"+action, body), http.StatusOK)
}

// statusesByTenant lists every task of a plan and returns each tenant's status.
func statusesByTenant(t *testing.T, base, planID string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, pg := range pageAll(t, base, planID, "limit=1000") {
		for _, tk := range pg.Tasks {
			out[tk.TenantID] = tk.Status
		}
	}
	return out
}

// POST /v1/plans/{id}/tasks/approve|reject|retry|cancel acts on every task matching a filter
// and counts what it did: approve and reject a gate by tenant prefix, cancel what is left,
// retry the cancelled by prefix, with a tenant that moved on to another plan skipped.
func TestBulkActionsOnAFilter(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	const n = 40
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("bk-%02d", i)
	}
	p := submit(t, base, wire.PlanRequest{Name: "bulk", Tenants: tenants(ids...), MaxConcurrency: 10,
		Stages: []wire.StageRequest{noop("prep"), approval("gate", "ship?"), noop("after")}})
	eventuallySummary(t, base, p.PlanID, statusCount("WAITING", n))

	res := bulk(t, base, p.PlanID, "approve", wire.BulkTasksBody{Stage: "gate", Tenant: "bk-1", Comment: "change 4711"})
	assert.Equal(t, wire.BulkResult{PlanID: p.PlanID, Action: "approve", Matched: 10, Applied: 10, Skipped: []wire.TaskRef{}}, res)
	res = bulk(t, base, p.PlanID, "reject", wire.BulkTasksBody{Status: []string{"waiting"}, Tenant: "bk-2"})
	assert.Equal(t, 10, res.Applied)
	eventuallySummary(t, base, p.PlanID, func(s wire.PlanSummary) bool { // a decided task is queued, then runs past or fails at its gate
		return s.Statuses["COMPLETED"] == 10 && s.Statuses["FAILED"] == 10
	})
	st := statusesByTenant(t, base, p.PlanID)
	for _, id := range ids {
		switch {
		case strings.HasPrefix(id, "bk-1"):
			assert.Equal(t, "COMPLETED", st[id], id)
		case strings.HasPrefix(id, "bk-2"):
			assert.Equal(t, "FAILED", st[id], id)
		default:
			assert.Equal(t, "WAITING", st[id], id)
		}
	}
	tk := tenantTask(t, base, "bk-10")
	require.NotNil(t, tk.Decision, "the decision is recorded with the task")
	assert.Equal(t, "change 4711", tk.Decision.Comment)

	res = bulk(t, base, p.PlanID, "approve", wire.BulkTasksBody{Tenant: "bk-1"})
	assert.Zero(t, res.Matched, "approve takes WAITING tasks only: none is left at bk-1")

	res = bulk(t, base, p.PlanID, "cancel", wire.BulkTasksBody{})
	assert.Equal(t, 20, res.Matched, "every task that has not ended")
	assert.Equal(t, 20, res.Applied)

	// bk-30 moves on to another plan: its cancelled task can no longer be retried.
	other := submit(t, base, wire.PlanRequest{Name: "other", Tenants: tenants("bk-30"), Stages: []wire.StageRequest{noop("a")}})
	require.Equal(t, "COMPLETED", waitPlan(t, base, other.PlanID).Status)
	res = bulk(t, base, p.PlanID, "retry", wire.BulkTasksBody{Status: []string{"CANCELLED"}, Tenant: "bk-3"})
	assert.Equal(t, 10, res.Matched)
	assert.Equal(t, 9, res.Applied)
	require.Equal(t, 1, res.SkippedCount)
	require.Len(t, res.Skipped, 1)
	assert.Equal(t, "bk-30", res.Skipped[0].TenantID)
	assert.NotEmpty(t, res.Skipped[0].Reason)
	eventuallySummary(t, base, p.PlanID, statusCount("WAITING", 9), "the retried tasks are back at the gate")

	res = bulk(t, base, p.PlanID, "retry", wire.BulkTasksBody{Class: "permanent", Stage: "1"})
	assert.Equal(t, 10, res.Matched, "the rejected tasks failed at the gate, class permanent")
}

// A bad action on a filter is refused before any task is touched, naming the field.
func TestBulkActionsBadInput(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	p := submit(t, base, wire.PlanRequest{Name: "bulk-bad", Tenants: tenants("bb-1", "bb-2"),
		Stages: []wire.StageRequest{noop("prep"), approval("gate", "ship?")}})
	eventuallySummary(t, base, p.PlanID, statusCount("WAITING", 2))
	tests := []struct {
		name, action string
		body         any
		status       int
		field        string
	}{
		{"approve a status it cannot change", "approve", wire.BulkTasksBody{Status: []string{"FAILED"}}, http.StatusBadRequest, "status[0]"},
		{"retry a status it cannot change", "retry", wire.BulkTasksBody{Status: []string{"FAILED", "WAITING"}}, http.StatusBadRequest, "status[1]"},
		{"cancel an ended status", "cancel", wire.BulkTasksBody{Status: []string{"COMPLETED"}}, http.StatusBadRequest, "status[0]"},
		{"an unknown status", "cancel", wire.BulkTasksBody{Status: []string{"SLEEPING"}}, http.StatusBadRequest, "status[0]"},
		{"an unknown stage", "approve", wire.BulkTasksBody{Stage: "nope"}, http.StatusBadRequest, "stage"},
		{"a comment too long", "reject", wire.BulkTasksBody{Comment: strings.Repeat("x", 1001)}, http.StatusBadRequest, "comment"},
		{"an unknown field", "approve", map[string]any{"tenants": "bb-"}, http.StatusBadRequest, "tenants"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			requireProblem(t, postJSON(t, base+"/v1/plans/"+p.PlanID+"/tasks/"+tc.action, tc.body), tc.status, tc.field)
		})
	}
	t.Run("an unknown action", func(t *testing.T) {
		t.Parallel()
		res := postJSON(t, base+"/v1/plans/"+p.PlanID+"/tasks/explode", wire.BulkTasksBody{})
		assert.Equal(t, http.StatusNotFound, res.status)
	})
	t.Run("an unknown plan", func(t *testing.T) {
		t.Parallel()
		res := postJSON(t, base+"/v1/plans/01M7ZC5JVSV9PWEE3VNQ77QGWW/tasks/approve", wire.BulkTasksBody{})
		assert.Equal(t, http.StatusNotFound, res.status)
	})
	assert.Equal(t, map[string]string{"bb-1": "WAITING", "bb-2": "WAITING"}, statusesByTenant(t, base, p.PlanID), "nothing changed")
}
