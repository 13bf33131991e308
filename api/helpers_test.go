package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/stagekind"
	"github.com/executor-dev/executor/wire"
)

// startServer starts the real wiring on a free port, with kinds registered by register before
// Start, and stops it when the test ends. It returns the base URL.
func startServer(t *testing.T, register ...func(*stagekind.Registry)) string {
	t.Helper()
	return servertest.Start(t, register...).URL()
}

// response is a read HTTP response.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request; headers are name, value pairs.
func do(t *testing.T, method, target string, body []byte, headers ...string) response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, target, rd)
	require.NoError(t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return response{status: res.StatusCode, header: res.Header, body: b}
}

func get(t *testing.T, target string) response {
	t.Helper()
	return do(t, http.MethodGet, target, nil)
}

// postJSON posts v marshalled to JSON (nil: no body).
func postJSON(t *testing.T, target string, v any, headers ...string) response {
	t.Helper()
	var body []byte
	if v != nil {
		var err error
		body, err = json.Marshal(v)
		require.NoError(t, err)
	}
	return do(t, http.MethodPost, target, body, append([]string{"Content-Type", "application/json"}, headers...)...)
}

// decode requires status and a JSON body and decodes it.
func decode[T any](t *testing.T, res response, status int) T {
	t.Helper()
	require.Equal(t, status, res.status, "body: %s", res.body)
	require.Equal(t, "application/json", res.header.Get("Content-Type"))
	var v T
	require.NoError(t, json.Unmarshal(res.body, &v), "body: %s", res.body)
	return v
}

// requireProblem requires a problem+json answer with status naming field ("" for none) and
// returns it.
func requireProblem(t *testing.T, res response, status int, field string) wire.Problem {
	t.Helper()
	require.Equal(t, status, res.status, "body: %s", res.body)
	require.Equal(t, wire.ProblemContentType, res.header.Get("Content-Type"))
	var p wire.Problem
	require.NoError(t, json.Unmarshal(res.body, &p), "body: %s", res.body)
	assert.Equal(t, status, p.Status)
	assert.NotEmpty(t, p.Type)
	assert.NotEmpty(t, p.Title)
	assert.Equal(t, field, p.Field, "problem: %+v", p)
	if field != "" {
		require.NotEmpty(t, p.Errors)
		assert.Equal(t, field, p.Errors[0].Field)
	}
	return p
}

// submit posts a plan and requires 201.
func submit(t *testing.T, base string, req wire.PlanRequest) wire.Plan {
	t.Helper()
	return decode[wire.Plan](t, postJSON(t, base+"/v1/plans", req), http.StatusCreated)
}

// waitPlan long-polls the plan until it ends (or 10s) and returns it.
func waitPlan(t *testing.T, base, planID string) wire.Plan {
	t.Helper()
	return decode[wire.Plan](t, get(t, base+"/v1/plans/"+planID+"?wait=10s"), http.StatusOK)
}

func tenantTask(t *testing.T, base, tenantID string) wire.Task {
	t.Helper()
	return decode[wire.Task](t, get(t, base+"/v1/tenants/"+url.PathEscape(tenantID)+"/task"), http.StatusOK)
}

// eventuallyTenant waits until the tenant's latest task satisfies cond and returns it.
func eventuallyTenant(t *testing.T, base, tenantID string, cond func(wire.Task) bool) wire.Task {
	t.Helper()
	var last wire.Task
	require.Eventually(t, func() bool {
		last = tenantTask(t, base, tenantID)
		return cond(last)
	}, 10*time.Second, 10*time.Millisecond, "tenant %s never got there; last: %+v", tenantID, last)
	return last
}

// eventuallyPlan waits until the plan satisfies cond and returns it.
func eventuallyPlan(t *testing.T, base, planID string, cond func(wire.Plan) bool) wire.Plan {
	t.Helper()
	var last wire.Plan
	require.Eventually(t, func() bool {
		last = decode[wire.Plan](t, get(t, base+"/v1/plans/"+planID), http.StatusOK)
		return cond(last)
	}, 10*time.Second, 10*time.Millisecond, "plan %s never got there; last: %+v", planID, last)
	return last
}

// eventuallySummary waits until the plan's summary meets cond and returns it.
func eventuallySummary(t *testing.T, base, planID string, cond func(wire.PlanSummary) bool, msg ...any) wire.PlanSummary {
	t.Helper()
	var last wire.PlanSummary
	require.Eventually(t, func() bool {
		last = decode[wire.PlanSummary](t, get(t, base+"/v1/plans/"+planID+"/summary"), http.StatusOK)
		return cond(last)
	}, 20*time.Second, 10*time.Millisecond, msg...)
	return last
}

// statusCount is a summary condition: count tasks in status st.
func statusCount(st string, count int) func(wire.PlanSummary) bool {
	return func(s wire.PlanSummary) bool { return s.Statuses[st] == count }
}

// waiting reports whether a task is WAITING at a gate.
func waiting(tk wire.Task) bool { return tk.Status == "WAITING" }

// inPhase returns a condition on a plan's canary phase.
func inPhase(phase string) func(wire.Plan) bool {
	return func(p wire.Plan) bool { return p.Canary != nil && p.Canary.Phase == phase }
}

func listPlans(t *testing.T, base, query string) wire.PlanList {
	t.Helper()
	return decode[wire.PlanList](t, get(t, base+"/v1/plans"+query), http.StatusOK)
}

func planTasks(t *testing.T, base, planID, query string) []wire.Task {
	t.Helper()
	return decode[wire.TaskList](t, get(t, base+"/v1/plans/"+planID+"/tasks"+query), http.StatusOK).Tasks
}

func tenants(ids ...string) []wire.TenantRequest {
	out := make([]wire.TenantRequest, len(ids))
	for i, id := range ids {
		out[i] = wire.TenantRequest{ID: id}
	}
	return out
}

func noop(name string) wire.StageRequest { return wire.StageRequest{Name: name, Kind: "noop"} }

func sleep(name, d string) wire.StageRequest {
	return wire.StageRequest{Name: name, Kind: "sleep", Params: map[string]any{"duration": d}}
}

// approval is a gate stage asking message (a template) of the operator.
func approval(name, message string) wire.StageRequest {
	return wire.StageRequest{Name: name, Kind: "approval", Params: map[string]any{"message": message}}
}

func tenantIDs(tasks []wire.Task) []string {
	out := make([]string, len(tasks))
	for i, tk := range tasks {
		out[i] = tk.TenantID
	}
	return out
}

func planIDs(plans []wire.Plan) []string {
	out := make([]string, len(plans))
	for i, p := range plans {
		out[i] = p.PlanID
	}
	return out
}
