package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/auth"
	"github.com/executor-dev/executor/wire"
)

// named is an API behind named tokens (alice, bob and carol operate; reader reads), and the
// Authorization headers of each.
func named(t *testing.T) (base string, as map[string][]string) {
	t.Helper()
	secrets := map[string]string{"alice": "alice-0123456789abcdef", "bob": "bob-0123456789abcdef", "carol": "carol-0123456789abcdef"}
	tokens := []auth.Token{{Role: auth.RoleRead, Name: "reader", Secret: "reader-0123456789abcdef"}}
	as = map[string][]string{"reader": {"Authorization", "Bearer reader-0123456789abcdef"}}
	for name, secret := range secrets {
		tokens = append(tokens, auth.Token{Role: auth.RoleOperate, Name: name, Secret: secret})
		as[name] = []string{"Authorization", "Bearer " + secret}
	}
	h, _ := fullRouter(t, auth.NewKeys(tokens))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL, as
}

// taskAs reads the tenant's task with a token.
func taskAs(t *testing.T, base, tenant string, as []string) wire.Task {
	t.Helper()
	return decode[wire.Task](t, do(t, http.MethodGet, base+"/v1/tenants/"+tenant+"/task", nil, as...), http.StatusOK)
}

// A gate's rule judges every decision: bob, who submitted, may not approve a gate requiring
// notSubmitter (403 naming the clause, nothing changed, the refusal in the audit trail);
// alice may; the task and its gate's output say who approved.
func TestAGateRequiringNotSubmitterRefusesTheSubmitter(t *testing.T) {
	t.Parallel()
	base, as := named(t)
	gate := approval("gate", "ship it?")
	gate.Approvers = &wire.Approvers{NotSubmitter: true}
	p := decode[wire.Plan](t, postJSON(t, base+"/v1/plans", wire.PlanRequest{
		Name: "four-eyes", Stages: []wire.StageRequest{gate}, Tenants: tenants("fe-1"),
	}, as["bob"]...), http.StatusCreated)
	assert.Equal(t, "bob", p.SubmittedBy)
	require.NotNil(t, p.Stages[0].Approvers)
	assert.True(t, p.Stages[0].Approvers.NotSubmitter)
	require.Eventually(t, func() bool { return taskAs(t, base, "fe-1", as["bob"]).Status == "WAITING" }, 10*time.Second, 10*time.Millisecond)

	res := postJSON(t, base+"/v1/tenants/fe-1/approve", wire.DecisionBody{Comment: "mine"}, as["bob"]...)
	prob := decode403(t, res)
	assert.Contains(t, prob.Detail, "approvers.notSubmitter")
	assert.Equal(t, "WAITING", taskAs(t, base, "fe-1", as["bob"]).Status, "nothing changed")

	decode[wire.Task](t, postJSON(t, base+"/v1/tenants/fe-1/approve", wire.DecisionBody{Comment: "lgtm"}, as["alice"]...), http.StatusOK)
	done := decode[wire.Plan](t, do(t, http.MethodGet, base+"/v1/plans/"+p.PlanID+"?wait=10s", nil, as["bob"]...), http.StatusOK)
	require.Equal(t, "COMPLETED", done.Status)
	tk := taskAs(t, base, "fe-1", as["bob"])
	require.NotNil(t, tk.Decision)
	assert.Equal(t, "alice", tk.Decision.By)
	assert.Equal(t, "operate", tk.Decision.Role)

	recs := auditTrail(t, base, map[string][]string{"plan": {p.PlanID}, "action": {"approve"}}, as["alice"]...)
	require.Len(t, recs, 2)
	assert.Equal(t, "alice", recs[0].Actor)
	assert.Equal(t, "applied", recs[0].Result)
	assert.Equal(t, "bob", recs[1].Actor)
	assert.Equal(t, "refused", recs[1].Result)
	assert.Equal(t, "forbidden", recs[1].Code)
	assert.Contains(t, recs[1].Outcome["error"], "approvers.notSubmitter: bob submitted the plan", "the record says which clause")
}

// decode403 requires a 403 problem.
func decode403(t *testing.T, res response) wire.Problem {
	t.Helper()
	require.Equal(t, http.StatusForbidden, res.status, "%s", res.body)
	var prob wire.Problem
	require.NoError(t, json.Unmarshal(res.body, &prob))
	assert.Equal(t, wire.ProblemForbidden, prob.Type)
	return prob
}

// A plan's rule asking for two approvals: its gates wait for two distinct approvers (the
// same one twice is a 409), one rejection rejects; its ring waits for two as well, and the
// plan lists who approved.
func TestAPlanAskingForTwoApprovals(t *testing.T) {
	t.Parallel()
	base, as := named(t)
	p := decode[wire.Plan](t, postJSON(t, base+"/v1/plans", wire.PlanRequest{
		Name: "two-keys", Approvers: &wire.Approvers{Count: 2, Names: []string{"alice", "bob", "carol"}},
		Canary: &wire.CanaryRequest{Tenants: 1, Then: "approve"},
		Stages: []wire.StageRequest{approval("gate", "go?")}, Tenants: tenants("tk-1", "tk-2"),
	}, as["carol"]...), http.StatusCreated)
	require.Eventually(t, func() bool { return taskAs(t, base, "tk-1", as["carol"]).Status == "WAITING" }, 10*time.Second, 10*time.Millisecond)

	one := decode[wire.Task](t, postJSON(t, base+"/v1/tenants/tk-1/approve", nil, as["alice"]...), http.StatusOK)
	require.Equal(t, "WAITING", one.Status, "one approval of two")
	require.NotNil(t, one.Wait)
	assert.Equal(t, 2, one.Wait.Needed)
	require.Len(t, one.Wait.Approvals, 1)
	assert.Equal(t, "alice", one.Wait.Approvals[0].By)
	again := postJSON(t, base+"/v1/tenants/tk-1/approve", nil, as["alice"]...)
	assert.Equal(t, http.StatusConflict, again.status, "the same approver twice: %s", again.body)
	decode[wire.Task](t, postJSON(t, base+"/v1/tenants/tk-1/approve", nil, as["bob"]...), http.StatusOK)

	require.Eventually(t, func() bool {
		pl := decode[wire.Plan](t, do(t, http.MethodGet, base+"/v1/plans/"+p.PlanID, nil, as["carol"]...), http.StatusOK)
		return inPhase("AWAITING_APPROVAL")(pl)
	}, 10*time.Second, 10*time.Millisecond)
	first := decode[wire.Plan](t, postJSON(t, base+"/v1/plans/"+p.PlanID+"/approve", nil, as["bob"]...), http.StatusOK)
	assert.True(t, inPhase("AWAITING_APPROVAL")(first), "one approval of two: the ring waits")
	decode403(t, postJSON(t, base+"/v1/plans/"+p.PlanID+"/approve", nil, as["reader"]...))
	second := decode[wire.Plan](t, postJSON(t, base+"/v1/plans/"+p.PlanID+"/approve", nil, as["alice"]...), http.StatusOK)
	assert.True(t, inPhase("PROMOTED")(second))
	require.Len(t, second.Decisions, 2)
	assert.Equal(t, "bob", second.Decisions[0].By)
	assert.True(t, second.Decisions[0].Partial)
	assert.Equal(t, "alice", second.Decisions[1].By)
	assert.False(t, second.Decisions[1].Partial)

	require.Eventually(t, func() bool { return taskAs(t, base, "tk-2", as["carol"]).Status == "WAITING" }, 10*time.Second, 10*time.Millisecond)
	decode[wire.Task](t, postJSON(t, base+"/v1/tenants/tk-2/approve", nil, as["alice"]...), http.StatusOK)
	rejected := decode[wire.Task](t, postJSON(t, base+"/v1/tenants/tk-2/reject", wire.DecisionBody{Comment: "no"}, as["bob"]...), http.StatusOK)
	assert.NotEqual(t, "WAITING", rejected.Status, "one rejection rejects")

	partial := map[string]string{}
	for _, r := range auditTrail(t, base, map[string][]string{"plan": {p.PlanID}, "action": {"approve"}}, as["carol"]...) {
		if r.Outcome["approvals"] != "" {
			partial[r.Actor+" "+r.Tenant] = r.Outcome["approvals"]
		}
	}
	assert.Equal(t, map[string]string{"alice tk-1": "1 of 2", "bob ": "1 of 2", "alice tk-2": "1 of 2"}, partial,
		"the audit trail tells an approval that counted from one that passed")
}

// A rule no one could satisfy is refused at submission, naming the field: a role that may not
// decide, a name listed twice.
func TestAnUnpassableRuleIsRefused(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	tests := []struct {
		name  string
		plan  *wire.Approvers
		gate  *wire.Approvers
		field string
	}{
		{"a read role on the plan", &wire.Approvers{Roles: []string{"read"}}, nil, "approvers.roles[0]"},
		{"an unknown role on a gate", nil, &wire.Approvers{Roles: []string{"operate", "admin"}}, "stages[0].approvers.roles[1]"},
		{"a name twice", nil, &wire.Approvers{Names: []string{"alice", "alice"}, Count: 2}, "stages[0].approvers.names[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			gate := approval("gate", "go?")
			gate.Approvers = tt.gate
			res := postJSON(t, base+"/v1/plans", wire.PlanRequest{Name: "never", Approvers: tt.plan,
				Stages: []wire.StageRequest{gate}, Tenants: tenants("un-" + tt.field[:3])})
			requireProblem(t, res, http.StatusBadRequest, tt.field)
		})
	}
}
