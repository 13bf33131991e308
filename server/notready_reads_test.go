package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/api"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// An executor that has not reached Redis since it started cannot see the plans, tasks and
// checkpoints Redis holds: every query of them (and their long polls) answers 503
// `unavailable` with Retry-After and the reason, never a 404 or an empty list that would tell
// an operator that a plan or a tenant's task does not exist. Once Redis answers, the same
// queries answer what Redis holds.
func TestQueriesAnswerNotReadyUntilRedisReached(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	rec := newDGBake()
	a := newDGClient(t, servertest.With(t, server.Config{RedisURL: rs.URL(), LeaseTTL: 2 * time.Second}, rec.register))
	p := newDGPlan("seen", 2, []int{5}, 0)
	submitted := a.submit(p)
	a.waitCompleted(submitted.PlanID)
	tenant, taskID := p.tenants[0], submitted.TaskIDs[0]

	proxy := rs.NewFaultProxy(redistest.Faults{})
	proxy.Cut() // b's Redis does not answer when it starts
	b := newDGClient(t, servertest.With(t, server.Config{RedisURL: proxy.URL(), LeaseTTL: 2 * time.Second}, rec.register))
	require.Equal(t, "unavailable", b.readyz().Status)

	reads := []struct{ name, path string }{
		{"plan list", "/v1/plans"},
		{"plan list by status", "/v1/plans?status=COMPLETED"},
		{"plan", "/v1/plans/" + submitted.PlanID},
		{"plan, long poll", "/v1/plans/" + submitted.PlanID + "?wait=1s"},
		{"a plan nobody submitted", "/v1/plans/" + ulid.Make().String()},
		{"plan tasks", "/v1/plans/" + submitted.PlanID + "/tasks"},
		{"task", "/v1/tasks/" + taskID},
		{"task, long poll", "/v1/tasks/" + taskID + "?wait=1s"},
		{"tenant task", "/v1/tenants/" + tenant + "/task"},
		{"tenant task, long poll", "/v1/tenants/" + tenant + "/task?wait=1s"},
		{"tenant checkpoint", "/v1/tenants/" + tenant + "/checkpoint"},
		{"tenant lock", "/v1/tenants/" + tenant + "/lock"},
	}
	for _, r := range reads {
		var prob wire.Problem
		resp := b.do(http.MethodGet, r.path, nil, &prob)
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s: %+v", r.name, prob)
		assert.Equal(t, wire.ProblemUnavailable, prob.Type, r.name)
		assert.Contains(t, prob.Detail, "has not reached Redis since it started", r.name)
		assert.Contains(t, prob.Detail, "(reason: redis not reached yet since start", r.name)
		assert.Equal(t, "2", resp.Header.Get(api.RetryAfterHeader), r.name)
	}
	var prob wire.Problem
	resp := b.do(http.MethodPost, "/v1/tenants/"+tenant+"/retry", nil, &prob)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "a tenant command, not a 404: %+v", prob)

	proxy.Restore()
	b.waitRedis("ok")
	var list wire.PlanList
	require.Equal(t, http.StatusOK, b.do(http.MethodGet, "/v1/plans", nil, &list).StatusCode)
	require.Len(t, list.Plans, 1)
	assert.Equal(t, submitted.PlanID, list.Plans[0].PlanID)
	var got wire.Plan
	require.Equal(t, http.StatusOK, b.do(http.MethodGet, "/v1/plans/"+submitted.PlanID+"?wait=1s", nil, &got).StatusCode)
	assert.Equal(t, "COMPLETED", got.Status)
	assert.Len(t, b.planTasks(submitted.PlanID), 2)
	var tk wire.Task
	require.Equal(t, http.StatusOK, b.do(http.MethodGet, "/v1/tasks/"+taskID, nil, &tk).StatusCode)
	assert.Equal(t, "COMPLETED", tk.Status)
	assert.Equal(t, taskID, b.tenantTask(tenant).TaskID)
	var cp wire.Checkpoint
	require.Equal(t, http.StatusOK, b.do(http.MethodGet, "/v1/tenants/"+tenant+"/checkpoint", nil, &cp).StatusCode)
	assert.Equal(t, 0, cp.LastCompletedStageIndex)
	assert.Equal(t, http.StatusOK, b.do(http.MethodGet, "/v1/tenants/"+tenant+"/lock", nil, nil).StatusCode)
}
