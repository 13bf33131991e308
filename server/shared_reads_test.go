package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// waitNotReady polls /readyz until it answers 503 (Redis degraded, or the probe failed) and
// returns that answer.
func (c *dgClient) waitNotReady() wire.Health {
	c.t.Helper()
	var h wire.Health
	dgPoll(c.t, dgReady, func() bool {
		h = c.readyz()
		return h.Status != "ok"
	}, "/readyz never answered 503")
	require.NotEmpty(c.t, h.Reason, "not ready without a reason")
	return h
}

// An executor sharing its Redis (the default topology) that is cut off from it cannot see
// what the others run: every query and command about a tenant another executor deploys
// answers 503 `unavailable` naming why, never a 404 "not found" (its memory would answer
// that), and it changes nothing. Once Redis answers, the same requests answer what Redis
// holds.
func TestSharedExecutorCutOffAnswers503ForWhatItCannotSee(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	rec := newDGBake()
	b := newDGClient(t, servertest.With(t, server.Config{RedisURL: rs.URL(), Name: "exec-b", LeaseTTL: 2 * time.Second, Logger: dgLogger()}, rec.register))
	proxy := rs.NewFaultProxy(redistest.Faults{})
	a := newDGClient(t, servertest.With(t, server.Config{RedisURL: proxy.URL(), Name: "exec-a", LeaseTTL: 2 * time.Second, Logger: dgLogger(),
		Workers: 1}, rec.register))
	ready := a.readyz()
	require.Equal(t, "shared", ready.Topology)
	require.Equal(t, "online", ready.Phase)

	p := newDGPlan("seen-by-b", 1, []int{3_000}, 0)
	submitted := b.submit(p)
	tenant := p.tenants[0]
	dgPoll(t, dgReady, func() bool { return b.tenantTask(tenant).Status == "RUNNING" }, "the tenant never ran")

	proxy.Cut()
	h := a.waitNotReady()
	assert.Equal(t, "shared", h.Topology)
	// Cut off, it cannot see what B runs: degraded (or not ready), or the probe of /readyz
	// found Redis failing before the executor did (status unavailable, no phase).
	assert.Contains(t, []string{"degraded", "not_ready", ""}, h.Phase, "cut off: it cannot see what B runs")
	assert.NotEqual(t, "ok", h.Status)

	requests := []struct{ name, method, path string }{
		{"tenant task", http.MethodGet, "/v1/tenants/" + tenant + "/task"},
		{"tenant checkpoint", http.MethodGet, "/v1/tenants/" + tenant + "/checkpoint"},
		{"task", http.MethodGet, "/v1/tasks/" + submitted.TaskIDs[0]},
		{"plan", http.MethodGet, "/v1/plans/" + submitted.PlanID},
		{"plan tasks", http.MethodGet, "/v1/plans/" + submitted.PlanID + "/tasks"},
		{"tenant cancel", http.MethodPost, "/v1/tenants/" + tenant + "/cancel"},
		{"tenant pause", http.MethodPost, "/v1/tenants/" + tenant + "/pause"},
		{"plan cancel", http.MethodPost, "/v1/plans/" + submitted.PlanID + "/cancel"},
	}
	for _, r := range requests {
		var prob wire.Problem
		resp := a.do(r.method, r.path, nil, &prob)
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s: %+v", r.name, prob)
		assert.Equal(t, wire.ProblemUnavailable, prob.Type, r.name)
		assert.NotEmpty(t, prob.Detail, r.name)
	}

	proxy.Restore()
	a.waitRedis("ok")
	got := a.tenantTask(tenant)
	assert.Equal(t, submitted.TaskIDs[0], got.TaskID)
	assert.NotEqual(t, "CANCELLED", got.Status, "a refused cancel changed nothing")
	b.waitCompleted(submitted.PlanID)
	rec.requireEachRanOnce(t, p.tenants, p.stages)
}
