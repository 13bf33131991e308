package api_test

import (
	"net/http"
	"testing"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/stagekind"
	"github.com/executor-dev/executor/wire"
)

// refTenants returns the tenants of a bulk operation's task references.
func refTenants(refs []wire.TaskRef) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.TenantID
	}
	return out
}

func TestRetryPlan(t *testing.T) {
	t.Parallel()
	kind := &flaky{broken: map[string]bool{}, runs: map[string]int{}}
	base := startServer(t, func(r *stagekind.Registry) {
		require.NoError(t, r.Register("flaky", stage.HandlerFunc(kind.Run)))
	})
	stages := []wire.StageRequest{
		{Name: "prep", Kind: "flaky"},
		{Name: "deploy", Kind: "flaky", Params: map[string]any{"fail": "yes"}},
	}
	// failedPlan submits a plan whose broken tenants fail at deploy, and waits for it to end.
	failedPlan := func(t *testing.T, broken []string, fine ...string) wire.Plan {
		t.Helper()
		for _, id := range broken {
			kind.setBroken(id, true)
		}
		p := submit(t, base, wire.PlanRequest{Stages: stages, Tenants: tenants(append(broken, fine...)...)})
		require.Equal(t, "FAILED", waitPlan(t, base, p.PlanID).Status)
		for _, id := range broken {
			kind.setBroken(id, false)
		}
		return p
	}

	tests := []struct {
		name        string
		prefix      string
		body        any // nil: no body
		wantPrepRun int // how often stage 0 ran for a retried tenant in the end
	}{
		{"from checkpoint", "rp-cp", map[string]any{"status": []string{"FAILED"}, "fromCheckpoint": true}, 1},
		{"from the start", "rp-fresh", map[string]any{"status": []string{"failed", "interrupted"}, "fromCheckpoint": false}, 2},
		{"empty body: failed and interrupted, from checkpoint", "rp-default", nil, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, b, ok := tc.prefix+"-a", tc.prefix+"-b", tc.prefix+"-ok"
			p := failedPlan(t, []string{a, b}, ok)

			res := postJSON(t, base+"/v1/plans/"+p.PlanID+"/retry", tc.body)
			out := decode[wire.PlanRetry](t, res, http.StatusOK)
			assert.Equal(t, p.PlanID, out.Plan.PlanID)
			assert.ElementsMatch(t, []string{a, b}, refTenants(out.Retried), "only the failed tasks")
			for _, r := range out.Retried {
				assert.Empty(t, r.Reason)
				assert.Contains(t, p.TaskIDs, r.TaskID)
			}
			assert.Empty(t, out.Skipped)
			assert.Contains(t, string(res.body), `"skipped":[]`, "an empty list is [], never null")

			done := waitPlan(t, base, p.PlanID)
			assert.Equal(t, "COMPLETED", done.Status, "the plan reopens and completes")
			for _, id := range []string{a, b} {
				tk := tenantTask(t, base, id)
				assert.Equal(t, 2, tk.Attempt, id)
				assert.Equal(t, tc.wantPrepRun, kind.count(id, "prep"), id)
			}
			assert.Equal(t, 1, tenantTask(t, base, ok).Attempt, "a completed task is not retried")
		})
	}

	t.Run("nothing to retry", func(t *testing.T) {
		t.Parallel()
		p := submit(t, base, wire.PlanRequest{Stages: []wire.StageRequest{noop("a")}, Tenants: tenants("rp-none")})
		require.Equal(t, "COMPLETED", waitPlan(t, base, p.PlanID).Status)
		res := postJSON(t, base+"/v1/plans/"+p.PlanID+"/retry", nil)
		out := decode[wire.PlanRetry](t, res, http.StatusOK)
		assert.Empty(t, out.Retried)
		assert.Contains(t, string(res.body), `"retried":[]`)
		assert.Equal(t, "COMPLETED", out.Plan.Status)
	})

	t.Run("a tenant that moved on is skipped with the reason", func(t *testing.T) {
		t.Parallel()
		first := failedPlan(t, []string{"rp-moved", "rp-stay"})
		later := submit(t, base, wire.PlanRequest{Stages: []wire.StageRequest{noop("a")}, Tenants: tenants("rp-moved")})
		require.Equal(t, "COMPLETED", waitPlan(t, base, later.PlanID).Status)

		out := decode[wire.PlanRetry](t, postJSON(t, base+"/v1/plans/"+first.PlanID+"/retry", nil), http.StatusOK)
		assert.Equal(t, []string{"rp-stay"}, refTenants(out.Retried))
		require.Len(t, out.Skipped, 1)
		assert.Equal(t, "rp-moved", out.Skipped[0].TenantID)
		assert.NotEmpty(t, out.Skipped[0].Reason)
		assert.Equal(t, later.PlanID, tenantTask(t, base, "rp-moved").PlanID, "the newer task is untouched")
	})

	t.Run("bad requests", func(t *testing.T) {
		t.Parallel()
		p := submit(t, base, wire.PlanRequest{Stages: []wire.StageRequest{noop("a")}, Tenants: tenants("rp-bad")})
		target := base + "/v1/plans/" + p.PlanID + "/retry"
		tests := []struct {
			name   string
			target string
			body   string
			status int
			field  string
		}{
			{"a status that cannot be retried", target, `{"status":["COMPLETED"]}`, http.StatusBadRequest, "status[0]"},
			{"an unknown status", target, `{"status":["FAILED","DONE"]}`, http.StatusBadRequest, "status[1]"},
			{"status not a list", target, `{"status":"FAILED"}`, http.StatusBadRequest, "status"},
			{"status entry not a string", target, `{"status":[1]}`, http.StatusBadRequest, "status[0]"},
			{"fromCheckpoint not a boolean", target, `{"fromCheckpoint":"yes"}`, http.StatusBadRequest, "fromCheckpoint"},
			{"unknown field", target, `{"statuses":["FAILED"]}`, http.StatusBadRequest, "statuses"},
			{"malformed", target, `{"status":`, http.StatusBadRequest, "body"},
			{"malformed plan id", base + "/v1/plans/not-a-ulid/retry", `{}`, http.StatusBadRequest, "planId"},
			{"unknown plan", base + "/v1/plans/" + ulid.Make().String() + "/retry", `{}`, http.StatusNotFound, ""},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				res := do(t, http.MethodPost, tc.target, []byte(tc.body), "Content-Type", "application/json")
				requireProblem(t, res, tc.status, tc.field)
			})
		}
	})
}
