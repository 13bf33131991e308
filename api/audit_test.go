package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/auth"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// auditRecords returns the "operator action" records of logs.
func auditRecords(t *testing.T, logs *servertest.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, rec := range servertest.JSONRecords(t, logs.String()) {
		if rec["msg"] == "operator action" {
			out = append(out, rec)
		}
	}
	return out
}

// findAudit returns the one audit record of action whose attributes include want.
func findAudit(t *testing.T, records []map[string]any, action string, want map[string]any) map[string]any {
	t.Helper()
	var found []map[string]any
	for _, rec := range records {
		if rec["action"] != action {
			continue
		}
		match := true
		for k, v := range want {
			match = match && rec[k] == v
		}
		if match {
			found = append(found, rec)
		}
	}
	require.Len(t, found, 1, "one %q record with %v in %v", action, want, records)
	return found[0]
}

// Every rollout control is an operator action in the audit log, with what it touched and
// what it did; a decision's comment is not logged.
func TestRolloutControlsAreAudited(t *testing.T) {
	t.Parallel()
	h, logs := fullRouter(t, nil)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	base := srv.URL
	const comment = "approved-by-the-change-board"

	p := submit(t, base, wire.PlanRequest{
		Name: "audited", Canary: &wire.CanaryRequest{Tenants: 1, Then: "approve"},
		Stages: []wire.StageRequest{approval("gate", "go?")}, Tenants: tenants("au-1", "au-2"),
	})
	eventuallyTenant(t, base, "au-1", waiting)
	decode[wire.Task](t, postJSON(t, base+"/v1/tenants/au-1/approve", wire.DecisionBody{Comment: comment}), http.StatusOK)
	eventuallyPlan(t, base, p.PlanID, inPhase("AWAITING_APPROVAL"))
	decode[wire.Plan](t, postJSON(t, base+"/v1/plans/"+p.PlanID+"/approve", nil), http.StatusOK)
	eventuallyTenant(t, base, "au-2", waiting)
	decode[wire.Task](t, postJSON(t, base+"/v1/tenants/au-2/reject", nil), http.StatusOK)
	require.Equal(t, "FAILED", waitPlan(t, base, p.PlanID).Status)
	retry := decode[wire.PlanRetry](t, postJSON(t, base+"/v1/plans/"+p.PlanID+"/retry", nil), http.StatusOK)
	require.Len(t, retry.Retried, 1)
	eventuallyTenant(t, base, "au-2", waiting) // the retried run waits at the gate again
	u := decode[wire.TenantUnlock](t, postJSON(t, base+"/v1/tenants/au-2/unlock", nil), http.StatusOK)

	records := auditRecords(t, logs)
	tests := []struct {
		name   string
		action string
		want   map[string]any
	}{
		{"tenant approval", "approve", map[string]any{"tenant_id": "au-1", "task_id": p.TaskIDs[0], "stage": "gate", "run": 1.0, "with_comment": true}},
		{"plan approval", "approve", map[string]any{"plan_id": p.PlanID, "phase": "PROMOTED"}},
		{"tenant rejection", "reject", map[string]any{"tenant_id": "au-2", "task_id": p.TaskIDs[1], "stage": "gate", "with_comment": false}},
		{"plan retry", "retry", map[string]any{"plan_id": p.PlanID, "statuses": "FAILED,INTERRUPTED", "from_checkpoint": true, "retried": 1.0, "skipped": 0.0}},
		{"unlock", "unlock", map[string]any{"tenant_id": "au-2", "released": u.Released, "previous_owner": u.PreviousOwner, "epoch": float64(u.Epoch), "interrupted": u.Interrupted}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := findAudit(t, records, tc.action, tc.want)
			assert.NotEmpty(t, rec["request_id"])
		})
	}
	assert.NotContains(t, logs.String(), comment, "a comment is part of a body: never logged")
}

// With named tokens, the audit record names who acted (the token's holder) besides its role;
// a token written without a name acts as "anonymous".
func TestTheAuditRecordNamesTheActor(t *testing.T) {
	t.Parallel()
	const alice, anon = "alice-0123456789abcdef", "anon-0123456789abcdef"
	keys := auth.NewKeys([]auth.Token{{Role: auth.RoleOperate, Name: "alice", Secret: alice}, {Role: auth.RoleOperate, Secret: anon}})
	router, logs := fullRouter(t, keys)
	submit := func(secret, tenant string) {
		t.Helper()
		plan := `{"name":"who","stages":[{"name":"a","kind":"noop"}],"tenants":[{"id":"` + tenant + `"}]}`
		req := httptest.NewRequest(http.MethodPost, "/v1/plans", strings.NewReader(plan))
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		router.ServeHTTP(rec, req)
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	}
	submit(alice, "w-1")
	submit(anon, "w-2")
	records := auditRecords(t, logs)
	assert.Equal(t, "operate", findAudit(t, records, "submit", map[string]any{"actor": "alice"})["role"])
	assert.Equal(t, "operate", findAudit(t, records, "submit", map[string]any{"actor": "anonymous"})["role"])
	assert.NotContains(t, logs.String(), alice, "the secret is never logged")
}
