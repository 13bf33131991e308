package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/wire"
)

// A plan's startRate and canary go in as submitted and come back with the canary's phase;
// a plan without them has neither on the wire.
func TestSubmitStartRateAndCanary(t *testing.T) {
	t.Parallel()
	base := startServer(t)

	t.Run("as JSON", func(t *testing.T) {
		t.Parallel()
		p := submit(t, base, wire.PlanRequest{
			Name: "paced", StartRate: 600, Canary: &wire.CanaryRequest{Tenants: 1, Then: "approve"},
			Stages: []wire.StageRequest{noop("a")}, Tenants: tenants("sr-1", "sr-2"),
		})
		assert.Equal(t, 600, p.StartRate)
		require.NotNil(t, p.Canary)
		assert.Equal(t, wire.Canary{Tenants: 1, Then: "approve", Phase: "CANARY"}, *p.Canary)
	})

	t.Run("as YAML", func(t *testing.T) {
		t.Parallel()
		body := "name: paced-yaml\nstartRate: 30\ncanary: {tenants: 1, then: auto}\n" +
			"stages: [{name: a, kind: noop}]\ntenants: [{id: sy-1}, {id: sy-2}]\n"
		p := decode[wire.Plan](t, do(t, http.MethodPost, base+"/v1/plans", []byte(body), "Content-Type", "application/yaml"), http.StatusCreated)
		assert.Equal(t, 30, p.StartRate)
		require.NotNil(t, p.Canary)
		assert.Equal(t, 1, p.Canary.Tenants)
		assert.Equal(t, "auto", p.Canary.Then)
	})

	t.Run("absent when not set", func(t *testing.T) {
		t.Parallel()
		res := postJSON(t, base+"/v1/plans", wire.PlanRequest{Stages: []wire.StageRequest{noop("a")}, Tenants: tenants("sn-1")})
		p := decode[wire.Plan](t, res, http.StatusCreated)
		assert.Zero(t, p.StartRate)
		assert.Nil(t, p.Canary)
		assert.NotContains(t, string(res.body), `"canary"`)
		assert.NotContains(t, string(res.body), `"startRate"`)
	})

	t.Run("bad values name the field", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name  string
			body  string
			field string
		}{
			{"negative start rate", `{"startRate":-1}`, "startRate"},
			{"start rate too high", `{"startRate":60001}`, "startRate"},
			{"start rate not a number", `{"startRate":"fast"}`, "startRate"},
			{"canary without tenants", `{"canary":{"then":"approve"}}`, "canary.tenants"},
			{"canary of every tenant", `{"canary":{"tenants":2,"then":"auto"}}`, "canary.tenants"},
			{"canary with an unknown then", `{"canary":{"tenants":1,"then":"later"}}`, "canary.then"},
			{"canary without then", `{"canary":{"tenants":1}}`, "canary.then"},
			{"canary phase is not an input", `{"canary":{"tenants":1,"then":"auto","phase":"PROMOTED"}}`, "canary.phase"},
			{"canary not an object", `{"canary":1}`, "canary"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				// The fields under test come first; the rest is a valid plan of two tenants.
				body := strings.TrimSuffix(tc.body, "}") +
					`,"stages":[{"name":"a","kind":"noop"}],"tenants":[{"id":"sb-1"},{"id":"sb-2"}]}`
				res := do(t, http.MethodPost, base+"/v1/plans", []byte(body), "Content-Type", "application/json")
				requireProblem(t, res, http.StatusBadRequest, tc.field)
			})
		}
	})
}

// An approval stage parks the task WAITING with the rendered message; approving lets it run
// on, rejecting fails it at that stage; each decision is kept on the task.
func TestApproveRejectTenant(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	stages := []wire.StageRequest{noop("prep"), approval("gate", "ship {{.TenantID}}?"), noop("after")}

	t.Run("approve", func(t *testing.T) {
		t.Parallel()
		p := submit(t, base, wire.PlanRequest{Stages: stages, Tenants: tenants("g-ok")})
		w := eventuallyTenant(t, base, "g-ok", waiting)
		require.NotNil(t, w.Wait)
		assert.Equal(t, "gate", w.Wait.Stage)
		assert.Equal(t, 1, w.Wait.StageIndex)
		assert.Equal(t, "approval", w.Wait.Reason)
		assert.Equal(t, "ship g-ok?", w.Wait.Message)
		assert.False(t, w.Wait.Since.IsZero())
		assert.Nil(t, w.Decision)
		// The run gives the lease up just after it recorded the wait.
		eventuallyTenant(t, base, "g-ok", func(tk wire.Task) bool { return waiting(tk) && tk.Lease != nil && !tk.Lease.Held })
		assert.Equal(t, 1, decode[wire.Plan](t, get(t, base+"/v1/plans/"+p.PlanID), http.StatusOK).Progress["WAITING"])

		tk := decode[wire.Task](t, postJSON(t, base+"/v1/tenants/g-ok/approve", wire.DecisionBody{Comment: "CHG-42 ok"}), http.StatusOK)
		assert.Nil(t, tk.Wait)
		require.NotNil(t, tk.Decision)
		assert.Equal(t, "gate", tk.Decision.Stage)
		assert.Equal(t, 1, tk.Decision.StageIndex)
		assert.Equal(t, 1, tk.Decision.Run)
		assert.True(t, tk.Decision.Approved)
		assert.Equal(t, "CHG-42 ok", tk.Decision.Comment)
		assert.False(t, tk.Decision.DecidedAt.IsZero())

		assert.Equal(t, "COMPLETED", waitPlan(t, base, p.PlanID).Status)
		done := tenantTask(t, base, "g-ok")
		require.NotNil(t, done.Decision, "the decision stays on the task")
		assert.True(t, done.Decision.Approved)

		again := requireProblem(t, postJSON(t, base+"/v1/tenants/g-ok/approve", nil), http.StatusConflict, "")
		assert.Equal(t, wire.ProblemInvalidTransition, again.Type)
	})

	t.Run("reject", func(t *testing.T) {
		t.Parallel()
		p := submit(t, base, wire.PlanRequest{Stages: stages, Tenants: tenants("g-no")})
		eventuallyTenant(t, base, "g-no", waiting)

		res := do(t, http.MethodPost, base+"/v1/tenants/g-no/reject", []byte("comment: not today\n"), "Content-Type", "application/yaml")
		tk := decode[wire.Task](t, res, http.StatusOK)
		require.NotNil(t, tk.Decision)
		assert.False(t, tk.Decision.Approved)
		assert.Equal(t, "not today", tk.Decision.Comment)

		assert.Equal(t, "FAILED", waitPlan(t, base, p.PlanID).Status)
		failed := tenantTask(t, base, "g-no")
		require.NotNil(t, failed.LastError)
		assert.Equal(t, "permanent", failed.LastError.Class)
		assert.Equal(t, "gate", failed.LastError.Stage)
		assert.NotContains(t, failed.LastError.Message, "not today", "the comment is on the decision only: errors are logged")

		requireProblem(t, postJSON(t, base+"/v1/tenants/g-no/reject", nil), http.StatusConflict, "")
	})

	t.Run("approve without a body", func(t *testing.T) {
		t.Parallel()
		p := submit(t, base, wire.PlanRequest{Stages: stages, Tenants: tenants("g-bare")})
		eventuallyTenant(t, base, "g-bare", waiting)
		tk := decode[wire.Task](t, do(t, http.MethodPost, base+"/v1/tenants/g-bare/approve", nil), http.StatusOK)
		require.NotNil(t, tk.Decision)
		assert.Empty(t, tk.Decision.Comment)
		assert.Equal(t, "COMPLETED", waitPlan(t, base, p.PlanID).Status)
	})

	t.Run("a task that does not wait", func(t *testing.T) {
		t.Parallel()
		p := submit(t, base, wire.PlanRequest{Stages: []wire.StageRequest{noop("a")}, Tenants: tenants("g-plain")})
		require.Equal(t, "COMPLETED", waitPlan(t, base, p.PlanID).Status)
		for _, op := range []string{"approve", "reject"} {
			pr := requireProblem(t, postJSON(t, base+"/v1/tenants/g-plain/"+op, nil), http.StatusConflict, "")
			assert.Equal(t, wire.ProblemInvalidTransition, pr.Type, op)
		}
	})

	t.Run("bad bodies name the field", func(t *testing.T) {
		t.Parallel()
		submit(t, base, wire.PlanRequest{Stages: stages, Tenants: tenants("g-bad")})
		eventuallyTenant(t, base, "g-bad", waiting)
		tests := []struct {
			name  string
			body  string
			field string
		}{
			{"comment too long", `{"comment":"` + strings.Repeat("x", app.MaxCommentLength+1) + `"}`, "comment"},
			{"comment not a string", `{"comment":42}`, "comment"},
			{"unknown field", `{"coment":"ok"}`, "coment"},
			{"malformed", `{"comment":`, "body"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				for _, op := range []string{"approve", "reject"} {
					res := do(t, http.MethodPost, base+"/v1/tenants/g-bad/"+op, []byte(tc.body), "Content-Type", "application/json")
					requireProblem(t, res, http.StatusBadRequest, tc.field)
				}
			})
		}
		assert.True(t, waiting(tenantTask(t, base, "g-bad")), "a refused decision changes nothing")
	})
}

// A plan's canary wave runs first; with then approve the plan waits in AWAITING_APPROVAL
// until an operator approves (the rest start) or rejects it (they never start).
func TestApproveRejectPlan(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	canaryPlan := func(then string, ids ...string) wire.PlanRequest {
		return wire.PlanRequest{
			Canary: &wire.CanaryRequest{Tenants: 1, Then: then}, Stages: []wire.StageRequest{noop("a")}, Tenants: tenants(ids...),
		}
	}

	t.Run("approve", func(t *testing.T) {
		t.Parallel()
		p := submit(t, base, canaryPlan("approve", "ca-1", "ca-2", "ca-3"))
		gated := eventuallyPlan(t, base, p.PlanID, inPhase("AWAITING_APPROVAL"))
		assert.Equal(t, "RUNNING", gated.Status)
		assert.Equal(t, 1, gated.Progress["COMPLETED"])
		assert.Equal(t, 2, gated.Progress["PENDING"], "the rest wait for the approval")

		approved := decode[wire.Plan](t, postJSON(t, base+"/v1/plans/"+p.PlanID+"/approve", nil), http.StatusOK)
		require.NotNil(t, approved.Canary)
		assert.Equal(t, "PROMOTED", approved.Canary.Phase)
		done := waitPlan(t, base, p.PlanID)
		assert.Equal(t, "COMPLETED", done.Status)
		assert.Equal(t, 3, done.Progress["COMPLETED"])

		for _, op := range []string{"approve", "reject"} {
			pr := requireProblem(t, postJSON(t, base+"/v1/plans/"+p.PlanID+"/"+op, nil), http.StatusConflict, "")
			assert.Equal(t, wire.ProblemInvalidTransition, pr.Type, op)
		}
	})

	t.Run("reject", func(t *testing.T) {
		t.Parallel()
		p := submit(t, base, canaryPlan("approve", "cr-1", "cr-2"))
		eventuallyPlan(t, base, p.PlanID, inPhase("AWAITING_APPROVAL"))

		rejected := decode[wire.Plan](t, postJSON(t, base+"/v1/plans/"+p.PlanID+"/reject", nil), http.StatusOK)
		require.NotNil(t, rejected.Canary)
		assert.Equal(t, "HALTED", rejected.Canary.Phase)
		ended := waitPlan(t, base, p.PlanID)
		assert.NotEqual(t, "COMPLETED", ended.Status)
		assert.Equal(t, "CANCELLED", tenantTask(t, base, "cr-2").Status, "the rest never start")
		assert.Equal(t, "COMPLETED", tenantTask(t, base, "cr-1").Status)

		requireProblem(t, postJSON(t, base+"/v1/plans/"+p.PlanID+"/approve", nil), http.StatusConflict, "")
	})

	t.Run("then auto promotes by itself", func(t *testing.T) {
		t.Parallel()
		p := submit(t, base, canaryPlan("auto", "cu-1", "cu-2"))
		done := waitPlan(t, base, p.PlanID)
		assert.Equal(t, "COMPLETED", done.Status)
		require.NotNil(t, done.Canary)
		assert.Equal(t, "PROMOTED", done.Canary.Phase)
	})

	t.Run("a plan without a canary wave", func(t *testing.T) {
		t.Parallel()
		p := submit(t, base, wire.PlanRequest{Stages: []wire.StageRequest{sleep("bake", "10s")}, Tenants: tenants("cn-1")})
		for _, op := range []string{"approve", "reject"} {
			pr := requireProblem(t, postJSON(t, base+"/v1/plans/"+p.PlanID+"/"+op, nil), http.StatusConflict, "")
			assert.Equal(t, wire.ProblemInvalidTransition, pr.Type, op)
			assert.Contains(t, pr.Detail, "canary", "the detail is the domain's own")
		}
		decode[wire.Plan](t, postJSON(t, base+"/v1/plans/"+p.PlanID+"/cancel", nil), http.StatusOK)
	})

	t.Run("unknown and malformed plans", func(t *testing.T) {
		t.Parallel()
		for _, op := range []string{"approve", "reject"} {
			requireProblem(t, postJSON(t, base+"/v1/plans/"+ulid.Make().String()+"/"+op, nil), http.StatusNotFound, "")
			requireProblem(t, postJSON(t, base+"/v1/plans/not-a-ulid/"+op, nil), http.StatusBadRequest, "planId")
		}
	})
}
