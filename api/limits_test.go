package api_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/api"
	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// A full queue answers 429 busy with Retry-After, and creates nothing.
func TestSubmitToAFullQueueIs429WithRetryAfter(t *testing.T) {
	t.Parallel()
	base := servertest.With(t, server.Config{Limits: app.Limits{MaxQueued: 3}}).URL()
	first := submit(t, base, wire.PlanRequest{
		MaxConcurrency: 1, Stages: []wire.StageRequest{sleep("bake", "1m")}, Tenants: tenants("full-1", "full-2"),
	})
	t.Cleanup(func() { postJSON(t, base+"/v1/plans/"+first.PlanID+"/cancel", nil) })

	// One task runs and one waits: one more waiting task fits, three do not.
	res := postJSON(t, base+"/v1/plans", wire.PlanRequest{
		Stages: []wire.StageRequest{noop("one")}, Tenants: tenants("late-1", "late-2", "late-3"),
	})
	p := requireProblem(t, res, http.StatusTooManyRequests, "")
	assert.Equal(t, wire.ProblemBusy, p.Type)
	secs, err := strconv.Atoi(res.header.Get(api.RetryAfterHeader))
	require.NoError(t, err, "Retry-After is whole seconds: %q", res.header.Get(api.RetryAfterHeader))
	assert.Equal(t, 1, secs, "1 or 2 tasks over with 64 workers: one nominal round")

	assert.Equal(t, []string{first.PlanID}, planIDs(listPlans(t, base, "").Plans), "nothing was created")
	requireProblem(t, get(t, base+"/v1/tenants/late-1/task"), http.StatusNotFound, "")

	dry := postJSON(t, base+"/v1/plans?dryRun=true", wire.PlanRequest{
		Stages: []wire.StageRequest{noop("one")}, Tenants: tenants("late-1", "late-2", "late-3"),
	})
	require.Equal(t, http.StatusOK, dry.status, "a dry run is not refused: %s", dry.body)
}

func TestSubmissionLimitsNameTheField(t *testing.T) {
	t.Parallel()
	base := servertest.With(t, server.Config{
		Limits:       app.Limits{MaxTenants: 2, MaxStages: 2, MaxParamsBytes: 64},
		MaxBodyBytes: 1024,
	}).URL()
	big := map[string]any{"p": strings.Repeat("x", 64)}
	tests := []struct {
		name   string
		req    wire.PlanRequest
		field  string
		status int
	}{
		{"tenants", wire.PlanRequest{Stages: []wire.StageRequest{noop("a")}, Tenants: tenants("l1", "l2", "l3")}, "tenants", http.StatusBadRequest},
		{"stages", wire.PlanRequest{Stages: []wire.StageRequest{noop("a"), noop("b"), noop("c")}, Tenants: tenants("l1")}, "stages", http.StatusBadRequest},
		{"stage params", wire.PlanRequest{
			Stages: []wire.StageRequest{{Name: "a", Kind: "noop", Params: big}}, Tenants: tenants("l1"),
		}, "stages", http.StatusBadRequest},
		{"tenant params", wire.PlanRequest{
			Stages: []wire.StageRequest{noop("a")}, Tenants: []wire.TenantRequest{{ID: "l1"}, {ID: "l2", Params: big}},
		}, "tenants[1].params", http.StatusBadRequest},
		{"label value", wire.PlanRequest{Labels: map[string]string{"team": "sre", "notes": strings.Repeat("v", 257)},
			Stages: []wire.StageRequest{noop("a")}, Tenants: tenants("l1")}, "labels.notes", http.StatusBadRequest},
		{"labels", wire.PlanRequest{Labels: manyLabels(65), Stages: []wire.StageRequest{noop("a")}, Tenants: tenants("l1")}, "labels", http.StatusBadRequest},
		{"body", wire.PlanRequest{Name: strings.Repeat("n", 1024), Stages: []wire.StageRequest{noop("a")}, Tenants: tenants("l1")}, "body", http.StatusRequestEntityTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, target := range []string{"/v1/plans", "/v1/plans?dryRun=true"} {
				requireProblem(t, postJSON(t, base+target, tc.req), tc.status, tc.field)
			}
		})
	}
	assert.Empty(t, listPlans(t, base, "").Plans, "nothing was created")
}

// manyLabels returns n labels k0..k(n-1).
func manyLabels(n int) map[string]string {
	out := make(map[string]string, n)
	for i := range n {
		out["k"+strconv.Itoa(i)] = "v"
	}
	return out
}

// A command's body (approve, reject, retry, a bulk action: a comment and a filter) is bounded
// at api.MaxCommandBodyBytes, expanded YAML included, whatever the plan's limit: a large body
// sent to any tenant or plan is refused with a 413 naming the body, before anything is looked up.
func TestCommandBodiesAreBounded(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	big := `{"comment": "` + strings.Repeat("x", api.MaxCommandBodyBytes) + `"}`
	var aliases strings.Builder
	aliases.WriteString("comment: &x \"" + strings.Repeat("x", 1<<10) + "\"\nfilter: {")
	for i := range 100 { // 100 KiB once expanded, from a 2 KiB body
		fmt.Fprintf(&aliases, "k%d: *x, ", i)
	}
	aliases.WriteString("}\n")
	tests := []struct{ name, path, body, contentType string }{
		{"approve a tenant", "/v1/tenants/nobody/approve", big, "application/json"},
		{"reject a tenant", "/v1/tenants/nobody/reject", big, "application/json"},
		{"retry a tenant", "/v1/tenants/nobody/retry", big, "application/json"},
		{"retry a plan", "/v1/plans/01ARZ3NDEKTSV4RRFFQ69G5FAV/retry", big, "application/json"},
		{"a bulk action", "/v1/plans/01ARZ3NDEKTSV4RRFFQ69G5FAV/tasks/cancel", big, "application/json"},
		{"YAML aliases", "/v1/tenants/nobody/approve", aliases.String(), "application/yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := requireProblem(t, do(t, http.MethodPost, base+tt.path, []byte(tt.body), "Content-Type", tt.contentType),
				http.StatusRequestEntityTooLarge, "body")
			assert.Equal(t, wire.ProblemPayloadTooLarge, p.Type)
		})
	}
	t.Run("a body within the bound reaches the lookup", func(t *testing.T) {
		t.Parallel()
		requireProblem(t, do(t, http.MethodPost, base+"/v1/tenants/nobody/approve", []byte(`{"comment":"ok"}`)), http.StatusNotFound, "")
	})
}
