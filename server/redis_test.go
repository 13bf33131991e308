package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// After a plan ran on Redis, every key of docs/design.md §5 is there, under its literal hash-tagged
// name, with a TTL between 6 and 7 days.
func TestPlanOnRedisWritesTheKeySchema(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	srv := servertest.With(t, server.Config{RedisURL: rs.URL()})
	body := `{"name":"keys","stages":[{"name":"one","kind":"noop"},{"name":"two","kind":"noop"}],
	          "tenants":[{"id":"k1"},{"id":"k2"},{"id":"k3"}]}`
	resp, err := http.Post(srv.URL()+"/v1/plans", "application/json", bytes.NewBufferString(body))
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	var p wire.Plan
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&p))
	resp.Body.Close()

	resp, err = http.Get(srv.URL() + "/v1/plans/" + p.PlanID + "?wait=20s")
	require.NoError(t, err)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&p))
	resp.Body.Close()
	require.Equal(t, "COMPLETED", p.Status)

	c := rs.Client()
	ctx := context.Background()
	ttlOK := func(key string) {
		t.Helper()
		ttl, err := c.TTL(ctx, key).Result()
		require.NoError(t, err)
		assert.GreaterOrEqual(t, ttl, 6*24*time.Hour, key)
		assert.LessOrEqual(t, ttl, 7*24*time.Hour, key)
	}
	ttlOK("executor:plan:{" + p.PlanID + "}")
	for i, tenant := range []string{"k1", "k2", "k3"} {
		taskID := p.TaskIDs[i]
		ttlOK("executor:task:{" + taskID + "}")
		ttlOK("executor:ckpt:{" + taskID + "}")
		ttlOK("executor:index:tenant:{" + tenant + "}")
		indexed, err := c.Get(ctx, "executor:index:tenant:{"+tenant+"}").Result()
		require.NoError(t, err)
		assert.Equal(t, taskID, indexed)
		status, err := c.HGet(ctx, "executor:task:{"+taskID+"}", "status").Result()
		require.NoError(t, err)
		assert.Equal(t, "COMPLETED", status)
	}
	listed, err := c.ZRangeArgs(ctx, redis.ZRangeArgs{Key: "executor:plans", Start: 0, Stop: -1, Rev: true}).Result()
	require.NoError(t, err)
	assert.Equal(t, []string{p.PlanID}, listed)

	resp, err = http.Get(srv.URL() + "/readyz")
	require.NoError(t, err)
	var h wire.Health
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
	resp.Body.Close()
	assert.Equal(t, wire.Health{Status: "ok", Executor: srv.Name(), Redis: "ok", Topology: "shared", Phase: "online"}, h)
}
