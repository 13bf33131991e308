package api_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/auth"
	"github.com/executor-dev/executor/wire"
)

// auditTrail follows GET /v1/audit's pages for query to the end.
func auditTrail(t *testing.T, base string, query url.Values, headers ...string) []wire.AuditRecord {
	t.Helper()
	var out []wire.AuditRecord
	for pages := 0; ; pages++ {
		require.Less(t, pages, 50, "the pages never end")
		page := decode[wire.AuditPage](t, do(t, http.MethodGet, base+"/v1/audit?"+query.Encode(), nil, headers...), http.StatusOK)
		out = append(out, page.Records...)
		if page.NextCursor == "" {
			return out
		}
		query.Set("cursor", page.NextCursor)
	}
}

// findRecord returns the one record of action on tenant ("" for a plan-wide one).
func findRecord(t *testing.T, recs []wire.AuditRecord, action, tenant string) wire.AuditRecord {
	t.Helper()
	var found []wire.AuditRecord
	for _, r := range recs {
		if r.Action == action && r.Tenant == tenant {
			found = append(found, r)
		}
	}
	require.Len(t, found, 1, "one %q record on %q in %+v", action, tenant, recs)
	return found[0]
}

// Every operator action is stored with who took it and what came of it, and GET /v1/audit
// lists them newest first, filtered and paged: the submission, gate and ring decisions (a
// comment kept), an action on a filter (the filter, the counts), a plan's retry, an unlock,
// and a refused command (its code).
func TestTheAuditTrailListsEveryAction(t *testing.T) {
	t.Parallel()
	const alice, bob = "alice-0123456789abcdef", "bob-0123456789abcdef"
	keys := auth.NewKeys([]auth.Token{{Role: auth.RoleOperate, Name: "alice", Secret: alice}, {Role: auth.RoleOperate, Name: "bob", Secret: bob}})
	h, _ := fullRouter(t, keys)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	base := srv.URL
	asAlice, asBob := []string{"Authorization", "Bearer " + alice}, []string{"Authorization", "Bearer " + bob}

	p := decode[wire.Plan](t, postJSON(t, base+"/v1/plans", wire.PlanRequest{
		Name: "trail", Canary: &wire.CanaryRequest{Tenants: 1, Then: "approve"},
		Stages: []wire.StageRequest{approval("gate", "go?")}, Tenants: tenants("tr-1", "tr-2", "tr-3"),
	}, asBob...), http.StatusCreated)
	require.Eventually(t, func() bool {
		return decode[wire.Task](t, do(t, http.MethodGet, base+"/v1/tenants/tr-1/task", nil, asAlice...), http.StatusOK).Status == "WAITING"
	}, 10*time.Second, 10*time.Millisecond)
	conflict := postJSON(t, base+"/v1/plans", wire.PlanRequest{Name: "again", Stages: []wire.StageRequest{approval("gate", "go?")},
		Tenants: tenants("tr-1")}, asBob...) // tr-1 is not done: refused, it leaves no record (the plan never existed)
	require.Equal(t, http.StatusConflict, conflict.status, "%s", conflict.body)
	decode[wire.Task](t, postJSON(t, base+"/v1/tenants/tr-1/approve", wire.DecisionBody{Comment: "canary is green"}, asAlice...), http.StatusOK)
	refused := postJSON(t, base+"/v1/tenants/tr-2/approve", nil, asAlice...) // not WAITING yet: 409
	require.Equal(t, http.StatusConflict, refused.status, "%s", refused.body)
	require.Eventually(t, func() bool {
		return inPhase("AWAITING_APPROVAL")(decode[wire.Plan](t, do(t, http.MethodGet, base+"/v1/plans/"+p.PlanID, nil, asAlice...), http.StatusOK))
	}, 10*time.Second, 10*time.Millisecond)
	decode[wire.Plan](t, postJSON(t, base+"/v1/plans/"+p.PlanID+"/approve", nil, asAlice...), http.StatusOK)
	require.Eventually(t, func() bool {
		page := decode[wire.TaskList](t, do(t, http.MethodGet, base+"/v1/plans/"+p.PlanID+"/tasks?status=WAITING", nil, asBob...), http.StatusOK)
		return len(page.Tasks) == 2
	}, 10*time.Second, 10*time.Millisecond)
	bulk := decode[wire.BulkResult](t, postJSON(t, base+"/v1/plans/"+p.PlanID+"/tasks/reject",
		wire.BulkTasksBody{Tenant: "tr-", Comment: "not today"}, asBob...), http.StatusOK)
	require.Equal(t, 2, bulk.Applied)
	decode[wire.TenantUnlock](t, postJSON(t, base+"/v1/tenants/tr-3/unlock", nil, asAlice...), http.StatusOK)

	recs := auditTrail(t, base, url.Values{"plan": {p.PlanID}}, asBob...)
	actions := make([]string, len(recs))
	for i, r := range recs {
		actions[i] = r.Action + ":" + r.Tenant
	}
	assert.Equal(t, []string{"unlock:tr-3", "bulk-reject:", "approve:", "approve:tr-2", "approve:tr-1", "submit:"}, actions, "newest first")

	sub := findRecord(t, recs, "submit", "")
	assert.Equal(t, "bob", sub.Actor)
	assert.Equal(t, "operate", sub.Role)
	assert.Equal(t, map[string]string{"name": "trail", "tenants": "3"}, sub.Request)
	assert.Equal(t, "applied", sub.Result)
	assert.NotEmpty(t, sub.RequestID)

	gate := findRecord(t, recs, "approve", "tr-1")
	assert.Equal(t, "alice", gate.Actor)
	assert.Equal(t, p.TaskIDs[0], gate.TaskID)
	assert.Equal(t, map[string]string{"comment": "canary is green"}, gate.Request)
	assert.Equal(t, "applied", gate.Result)

	no := findRecord(t, recs, "approve", "tr-2")
	assert.Equal(t, "refused", no.Result)
	assert.Equal(t, "invalid-transition", no.Code)

	ring := findRecord(t, recs, "approve", "")
	assert.Equal(t, "PROMOTED", ring.Outcome["phase"])

	b := findRecord(t, recs, "bulk-reject", "")
	assert.Equal(t, "bob", b.Actor)
	assert.Equal(t, map[string]string{"status": "WAITING", "tenant": "tr-", "comment": "not today"}, b.Request)
	assert.Equal(t, map[string]string{"matched": "2", "applied": "2", "skipped": "0"}, b.Outcome)

	u := findRecord(t, recs, "unlock", "tr-3")
	assert.Equal(t, "false", u.Outcome["released"], "nothing held the tenant's lease")
	assert.Equal(t, p.TaskIDs[2], u.TaskID)

	t.Run("filters", func(t *testing.T) {
		tests := []struct {
			name  string
			query url.Values
			want  int
		}{
			{"actor", url.Values{"plan": {p.PlanID}, "actor": {"alice"}}, 4},
			{"action", url.Values{"plan": {p.PlanID}, "action": {"approve"}}, 3},
			{"tenant", url.Values{"plan": {p.PlanID}, "tenant": {"tr-2"}}, 1},
			{"every plan, one actor", url.Values{"actor": {"bob"}}, 2},
			{"paged by one", url.Values{"plan": {p.PlanID}, "limit": {"1"}}, 6},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				assert.Len(t, auditTrail(t, base, tt.query, asAlice...), tt.want)
			})
		}
	})
	t.Run("bad input names the parameter", func(t *testing.T) {
		for _, param := range []string{"plan", "tenant", "cursor", "limit", "action"} {
			res := do(t, http.MethodGet, base+"/v1/audit?"+param+"=%20bad%20", nil, asAlice...)
			requireProblem(t, res, http.StatusBadRequest, param)
		}
		other := url.Values{"plan": {"01JWNNT770AZ1EYD5Q5D0CJJGQ"}, "cursor": {p.PlanID + "/1"}}
		requireProblem(t, do(t, http.MethodGet, base+"/v1/audit?"+other.Encode(), nil, asAlice...), http.StatusBadRequest, "cursor")
	})
}
