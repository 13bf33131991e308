package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/api"
	"github.com/executor-dev/executor/wire"
)

func TestSubmitAndQuery(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	stages := []wire.StageRequest{noop("validate"), sleep("bake", "20ms"), noop("push")}
	req := wire.PlanRequest{
		Name: "cfg-rollout-1", Labels: map[string]string{"team": "sre"}, MaxConcurrency: 2,
		Stages: stages, Tenants: tenants("t-1", "t-2", "t-3"),
	}

	res := postJSON(t, base+"/v1/plans", req)
	created := decode[wire.Plan](t, res, http.StatusCreated)
	require.NotEmpty(t, created.PlanID)
	assert.Equal(t, "/v1/plans/"+created.PlanID, res.header.Get("Location"))
	assert.Empty(t, res.header.Get(wire.IdempotentReplayedHeader))
	assert.Equal(t, "cfg-rollout-1", created.Name)
	assert.Equal(t, map[string]string{"team": "sre"}, created.Labels)
	assert.Equal(t, 2, created.MaxConcurrency)
	assert.Len(t, created.TaskIDs, 3)
	assert.Equal(t, 3, created.Progress["total"])
	assert.Equal(t, []wire.StageRef{{Name: "validate", Kind: "noop"}, {Name: "bake", Kind: "sleep"}, {Name: "push", Kind: "noop"}}, created.Stages)

	got := decode[wire.Plan](t, get(t, base+"/v1/plans/"+created.PlanID+"?include=taskIds"), http.StatusOK)
	assert.Equal(t, created.PlanID, got.PlanID)
	assert.Equal(t, created.TaskIDs, got.TaskIDs)

	done := waitPlan(t, base, created.PlanID)
	require.Equal(t, "COMPLETED", done.Status)
	assert.Equal(t, 3, done.Progress["COMPLETED"])
	assert.Equal(t, done.Progress["total"], done.Progress["COMPLETED"])
	assert.NotNil(t, done.StartedAt)
	assert.NotNil(t, done.FinishedAt)

	t.Run("tasks", func(t *testing.T) {
		t.Parallel()
		all := planTasks(t, base, created.PlanID, "")
		require.Len(t, all, 3)
		assert.Equal(t, []string{"t-1", "t-2", "t-3"}, tenantIDs(all))
		for i, tk := range all {
			assert.Equal(t, created.TaskIDs[i], tk.TaskID)
			assert.Equal(t, "COMPLETED", tk.Status)
			assert.Equal(t, 3, tk.CurrentStage)
			assert.Nil(t, tk.Lease, "listings carry no lease")
			assert.Len(t, tk.Attempts, 3)
		}
		page := planTasks(t, base, created.PlanID, "?status=completed&offset=1&limit=1")
		assert.Equal(t, []string{"t-2"}, tenantIDs(page))
		assert.Empty(t, planTasks(t, base, created.PlanID, "?status=FAILED"))
	})

	t.Run("tenant task", func(t *testing.T) {
		t.Parallel()
		tk := tenantTask(t, base, "t-2")
		assert.Equal(t, created.TaskIDs[1], tk.TaskID)
		assert.Equal(t, created.PlanID, tk.PlanID)
		assert.Equal(t, "COMPLETED", tk.Status)
		assert.Equal(t, 1, tk.Attempt)
		require.NotNil(t, tk.Lease)
		assert.False(t, tk.Lease.Held, "a completed task holds no lease")
		require.NotNil(t, tk.Checkpoint)
		assert.Equal(t, len(stages)-1, tk.Checkpoint.LastCompletedStageIndex)
		assert.Equal(t, []string{"validate", "bake", "push"}, tk.Checkpoint.CompletedStages)
	})

	t.Run("tenant checkpoint", func(t *testing.T) {
		t.Parallel()
		cp := decode[wire.Checkpoint](t, get(t, base+"/v1/tenants/t-3/checkpoint"), http.StatusOK)
		assert.Equal(t, created.TaskIDs[2], cp.TaskID)
		assert.Equal(t, "t-3", cp.TenantID)
		assert.Equal(t, 2, cp.LastCompletedStageIndex)
		assert.Equal(t, []string{"validate", "bake", "push"}, cp.CompletedStages)
		assert.JSONEq(t, `{"slept":"20ms"}`, string(cp.ContextData["bake"]))
		assert.False(t, cp.SavedAt.IsZero())
	})

	t.Run("task by id", func(t *testing.T) {
		t.Parallel()
		tk := decode[wire.Task](t, get(t, base+"/v1/tasks/"+created.TaskIDs[0]), http.StatusOK)
		assert.Equal(t, "t-1", tk.TenantID)
		assert.Equal(t, "COMPLETED", tk.Status)
		require.NotNil(t, tk.Checkpoint)
		assert.Equal(t, 2, tk.Checkpoint.LastCompletedStageIndex)
		assert.NotNil(t, tk.Lease)
	})
}

func TestListPlans(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	assert.Equal(t, wire.PlanList{Plans: []wire.Plan{}}, listPlans(t, base, ""), "no plans: an empty list")
	assert.JSONEq(t, `{"plans":[]}`, string(get(t, base+"/v1/plans").body))

	p1 := submit(t, base, wire.PlanRequest{Name: "one", Stages: []wire.StageRequest{noop("a")}, Tenants: tenants("l-1")})
	p2 := submit(t, base, wire.PlanRequest{Name: "two", Stages: []wire.StageRequest{noop("a")}, Tenants: tenants("l-2")})
	p3 := submit(t, base, wire.PlanRequest{Name: "three", Stages: []wire.StageRequest{sleep("a", "10s")}, Tenants: tenants("l-3")})
	require.Equal(t, "COMPLETED", waitPlan(t, base, p1.PlanID).Status)
	require.Equal(t, "COMPLETED", waitPlan(t, base, p2.PlanID).Status)
	cancelled := decode[wire.Plan](t, postJSON(t, base+"/v1/plans/"+p3.PlanID+"/cancel", nil), http.StatusOK)
	require.Equal(t, "CANCELLED", cancelled.Status)

	tests := []struct {
		name       string
		query      string
		want       []string
		nextCursor string
	}{
		{"newest first", "", []string{p3.PlanID, p2.PlanID, p1.PlanID}, ""},
		{"first page", "?limit=2", []string{p3.PlanID, p2.PlanID}, p2.PlanID},
		{"second page", "?limit=2&cursor=" + p2.PlanID, []string{p1.PlanID}, ""},
		{"full last page", "?limit=1&cursor=" + p2.PlanID, []string{p1.PlanID}, p1.PlanID},
		{"after the last", "?limit=1&cursor=" + p1.PlanID, []string{}, ""},
		{"by status", "?status=COMPLETED", []string{p2.PlanID, p1.PlanID}, ""},
		{"status is case-insensitive", "?status=cancelled", []string{p3.PlanID}, ""},
		{"status and paging", "?status=COMPLETED&limit=1", []string{p2.PlanID}, p2.PlanID},
		{"status and cursor", "?status=COMPLETED&cursor=" + p2.PlanID, []string{p1.PlanID}, ""},
		{"no match", "?status=PAUSED", []string{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			page := listPlans(t, base, tc.query)
			assert.Equal(t, tc.want, planIDs(page.Plans))
			assert.Equal(t, tc.nextCursor, page.NextCursor)
		})
	}

	t.Run("plans carry progress", func(t *testing.T) {
		t.Parallel()
		page := listPlans(t, base, "?limit=1")
		require.Len(t, page.Plans, 1)
		assert.Equal(t, "CANCELLED", page.Plans[0].Status)
		assert.Equal(t, 1, page.Plans[0].Progress["total"])
	})
}

// planYAML is planJSON in YAML: the two must submit the same plan.
const planYAML = `
name: yaml-vs-json
labels: {team: sre}
maxConcurrency: 3
failureBudget: 1
startAt: 2020-01-01T00:00:00Z
stages:
  - name: push-config
    kind: noop
    timeout: 10s
    params:
      url: "http://cfg.internal/tenants/{{.TenantID}}"
      body: "{{json .Params}}"
      headers: {X-Version: "{{.Params.version}}"}
      tries: [1, 2.5, true, null]
    retry: {maxAttempts: 3, initialBackoff: 200ms, maxBackoff: 5s, multiplier: 2, jitter: equal}
  - name: bake
    kind: sleep
    params: {duration: 10ms}
  - name: health
    kind: noop
    params:
      url: 'http://h/health?baked={{index .Outputs "bake" "slept"}}'
tenants:
  - id: y-1
    params: {version: 1.2.3, replicas: 2}
  - id: y-2
    params: {version: 1.2.4, replicas: 3}
`

const planJSON = `{
  "name": "yaml-vs-json",
  "labels": {"team": "sre"},
  "maxConcurrency": 3,
  "failureBudget": 1,
  "startAt": "2020-01-01T00:00:00Z",
  "stages": [
    {"name": "push-config", "kind": "noop", "timeout": "10s",
     "params": {"url": "http://cfg.internal/tenants/{{.TenantID}}", "body": "{{json .Params}}",
                "headers": {"X-Version": "{{.Params.version}}"}, "tries": [1, 2.5, true, null]},
     "retry": {"maxAttempts": 3, "initialBackoff": "200ms", "maxBackoff": "5s", "multiplier": 2, "jitter": "equal"}},
    {"name": "bake", "kind": "sleep", "params": {"duration": "10ms"}},
    {"name": "health", "kind": "noop",
     "params": {"url": "http://h/health?baked={{index .Outputs \"bake\" \"slept\"}}"}}
  ],
  "tenants": [
    {"id": "y-1", "params": {"version": "1.2.3", "replicas": 2}},
    {"id": "y-2", "params": {"version": "1.2.4", "replicas": 3}}
  ]
}`

func TestYAMLSubmissionEqualsJSON(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	jsonPreview := decode[wire.DryRun](t,
		do(t, http.MethodPost, base+"/v1/plans?dryRun=true", []byte(planJSON)), http.StatusOK)
	require.Len(t, jsonPreview.Tenants, 2)
	assert.Equal(t, `{"replicas":2,"version":"1.2.3"}`, jsonPreview.Tenants[0].Stages[0].Params["body"])
	assert.Equal(t, "1.2.4", jsonPreview.Tenants[1].Stages[0].Params["headers"].(map[string]any)["X-Version"])

	for _, ct := range []string{"application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml; charset=utf-8"} {
		t.Run("dry run "+ct, func(t *testing.T) {
			t.Parallel()
			yamlPreview := decode[wire.DryRun](t,
				do(t, http.MethodPost, base+"/v1/plans?dryRun=true", []byte(planYAML), "Content-Type", ct), http.StatusOK)
			assert.Equal(t, jsonPreview, yamlPreview)
		})
	}
}

func TestYAMLSubmissionCreatesTheJSONPlan(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	fromJSON := decode[wire.Plan](t, do(t, http.MethodPost, base+"/v1/plans", []byte(planJSON)), http.StatusCreated)
	require.Equal(t, "COMPLETED", waitPlan(t, base, fromJSON.PlanID).Status)
	fromYAML := decode[wire.Plan](t, do(t, http.MethodPost, base+"/v1/plans", []byte(planYAML),
		"Content-Type", "application/yaml"), http.StatusCreated)
	require.Equal(t, "COMPLETED", waitPlan(t, base, fromYAML.PlanID).Status)

	assert.NotEqual(t, fromJSON.PlanID, fromYAML.PlanID)
	assert.Equal(t, fromJSON.Name, fromYAML.Name)
	assert.Equal(t, fromJSON.Labels, fromYAML.Labels)
	assert.Equal(t, fromJSON.MaxConcurrency, fromYAML.MaxConcurrency)
	assert.Equal(t, fromJSON.FailureBudget, fromYAML.FailureBudget)
	assert.Equal(t, fromJSON.StartAt, fromYAML.StartAt)
	assert.Equal(t, fromJSON.Stages, fromYAML.Stages)
	assert.Equal(t, tenantIDs(planTasks(t, base, fromJSON.PlanID, "")), tenantIDs(planTasks(t, base, fromYAML.PlanID, "")))
	assert.Equal(t, []string{"y-1", "y-2"}, tenantIDs(planTasks(t, base, fromYAML.PlanID, "")))
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	req := wire.PlanRequest{Name: "idem", Stages: []wire.StageRequest{noop("a")}, Tenants: tenants("i-1")}

	first := postJSON(t, base+"/v1/plans", req, wire.IdempotencyKeyHeader, "release-42/attempt-1")
	created := decode[wire.Plan](t, first, http.StatusCreated)
	assert.Empty(t, first.header.Get(wire.IdempotentReplayedHeader))

	again := postJSON(t, base+"/v1/plans", req, wire.IdempotencyKeyHeader, "release-42/attempt-1")
	replayed := decode[wire.Plan](t, again, http.StatusOK)
	assert.Equal(t, "true", again.header.Get(wire.IdempotentReplayedHeader))
	assert.Equal(t, created.PlanID, replayed.PlanID)
	assert.Equal(t, created.TaskIDs, replayed.TaskIDs)
	assert.Equal(t, "/v1/plans/"+created.PlanID, again.header.Get("Location"))

	list := listPlans(t, base, "")
	assert.Equal(t, []string{created.PlanID}, planIDs(list.Plans))

	tests := []struct {
		name string
		key  string
	}{
		{"empty", ""},
		{"space", "has space"},
		{"too long", strings.Repeat("k", api.MaxIdempotencyKeyLength+1)},
		{"not ASCII", "ключ"},
		{"control character", "a\tb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := postJSON(t, base+"/v1/plans", req, wire.IdempotencyKeyHeader, tc.key)
			requireProblem(t, res, http.StatusBadRequest, wire.IdempotencyKeyHeader)
		})
	}
	t.Run("longest key", func(t *testing.T) {
		t.Parallel()
		other := wire.PlanRequest{Name: "long", Stages: []wire.StageRequest{noop("a")}, Tenants: tenants("i-2")}
		key := strings.Repeat("k", api.MaxIdempotencyKeyLength)
		p := decode[wire.Plan](t, postJSON(t, base+"/v1/plans", other, wire.IdempotencyKeyHeader, key), http.StatusCreated)
		assert.Equal(t, p.PlanID, decode[wire.Plan](t,
			postJSON(t, base+"/v1/plans", other, wire.IdempotencyKeyHeader, key), http.StatusOK).PlanID)
	})
}

func TestDryRun(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	req := wire.PlanRequest{
		Name: "preview",
		Stages: []wire.StageRequest{
			sleep("bake", "{{.Params.d}}"),
			{Name: "report", Kind: "noop", Params: map[string]any{
				"msg": `{{.TenantID}} baked {{index .Outputs "bake" "slept"}}`,
			}},
		},
		Tenants: []wire.TenantRequest{
			{ID: "d-1", Params: map[string]any{"d": "10ms"}},
			{ID: "d-2", Params: map[string]any{"d": "20ms"}},
		},
	}
	res := postJSON(t, base+"/v1/plans?dryRun=true", req, wire.IdempotencyKeyHeader, "dry")
	preview := decode[wire.DryRun](t, res, http.StatusOK)
	assert.Empty(t, res.header.Get("Location"))
	assert.True(t, preview.DryRun)
	assert.Contains(t, string(res.body), `"conflicts":[]`, "conflicts is never null")
	require.Len(t, preview.Tenants, 2)
	for i, want := range []string{"10ms", "20ms"} {
		tp := preview.Tenants[i]
		assert.Equal(t, req.Tenants[i].ID, tp.TenantID)
		require.Len(t, tp.Stages, 2)
		assert.Equal(t, wire.RenderedStage{Name: "bake", Kind: "sleep", Params: map[string]any{"duration": want}}, tp.Stages[0])
		assert.Equal(t, tp.TenantID+" baked <output bake.slept>", tp.Stages[1].Params["msg"], "outputs are unknown before a run: a placeholder")
	}

	assert.Empty(t, listPlans(t, base, "").Plans, "a dry run creates nothing")
	requireProblem(t, get(t, base+"/v1/tenants/d-1/task"), http.StatusNotFound, "")

	// The dry run did not consume the idempotency key.
	created := decode[wire.Plan](t, postJSON(t, base+"/v1/plans", req, wire.IdempotencyKeyHeader, "dry"), http.StatusCreated)
	require.Equal(t, "COMPLETED", waitPlan(t, base, created.PlanID).Status)
	cp := decode[wire.Checkpoint](t, get(t, base+"/v1/tenants/d-2/checkpoint"), http.StatusOK)
	assert.JSONEq(t, `{"slept":"20ms"}`, string(cp.ContextData["bake"]))
}

func TestSubmitAcceptsMissingContentType(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	body, err := json.Marshal(wire.PlanRequest{Stages: []wire.StageRequest{noop("a")}, Tenants: tenants("n-1")})
	require.NoError(t, err)
	p := decode[wire.Plan](t, do(t, http.MethodPost, base+"/v1/plans", body), http.StatusCreated)
	assert.Equal(t, 5, p.MaxConcurrency, "default maxConcurrency")
}
