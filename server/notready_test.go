package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/api"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// An executor whose Redis does not answer when it starts has never seen which tenants the
// other executors run: until it reaches Redis it is not ready (/readyz 503 naming Redis and
// the error), refuses new plans and the commands on other executors' work with 503 and
// Retry-After, and says so in its serving log line (its queries answer 503 too:
// notready_reads_test.go). Once Redis answers it logs it, is ready, and takes a plan, written
// to Redis.
func TestNotReadyUntilRedisReachedOnce(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	rs.Kill()
	logs := &servertest.Buffer{}
	rec := newDGBake()
	srv := servertest.With(t, server.Config{RedisURL: rs.URL(), LeaseTTL: 2 * time.Second,
		Logger: slog.New(slog.NewJSONHandler(logs, nil))}, rec.register)
	c := newDGClient(t, srv)

	h := c.readyz()
	assert.Equal(t, "unavailable", h.Status)
	assert.Equal(t, "unavailable", h.Redis)
	assert.True(t, strings.HasPrefix(h.Reason, "redis not reached yet since start: "), h.Reason)
	assert.Contains(t, h.Reason, "connection refused")

	p := newDGPlan("unreached", 2, []int{10}, 0)
	id := ulid.Make().String()
	writes := []struct {
		name, path string
		body       any
	}{
		{"submit", "/v1/plans", p.request()},
		{"cancel a plan", "/v1/plans/" + id + "/cancel", nil},
		{"retry a plan", "/v1/plans/" + id + "/retry", nil},
		{"approve a plan", "/v1/plans/" + id + "/approve", nil},
		{"resume a plan", "/v1/plans/" + id + "/resume", nil},
	}
	for _, w := range writes {
		var prob wire.Problem
		resp := c.do(http.MethodPost, w.path, w.body, &prob)
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s: %+v", w.name, prob)
		assert.Equal(t, wire.ProblemUnavailable, prob.Type, w.name)
		assert.Contains(t, prob.Detail, "not reached", w.name)
		assert.Equal(t, "2", resp.Header.Get(api.RetryAfterHeader), w.name)
	}
	var serving map[string]any
	for _, rec := range servertest.JSONRecords(t, logs.String()) {
		if rec["msg"] == "executor serving" {
			serving = rec
		}
	}
	require.NotNil(t, serving, "the serving line: %s", logs.String())
	assert.Equal(t, "redis", serving["store"])
	assert.Equal(t, "unreachable", serving["redis"])
	assert.Contains(t, serving["err"], "connection refused")

	rs.Restart()
	c.waitRedis("ok")
	assert.Contains(t, logs.String(), `"msg":"redis reached"`)
	var list wire.PlanList
	require.Equal(t, http.StatusOK, c.do(http.MethodGet, "/v1/plans", nil, &list).StatusCode)
	assert.Empty(t, list.Plans, "a refused plan was created")
	submitted := c.submit(p)
	c.waitCompleted(submitted.PlanID)
	n, err := rs.Client().Exists(context.Background(), rediskey.New("").Plan(submitted.PlanID)).Result()
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "the plan is in Redis")
	rec.requireEachRanOnce(t, p.tenants, p.stages)
}
