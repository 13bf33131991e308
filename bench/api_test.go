package bench_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/auth"
	"github.com/executor-dev/executor/bench"
	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
)

// benchToken is the operate token of the servers these tests start.
const benchToken = "bench-test-token-0123456789"

// TestRunAPIRedis runs the bench through the HTTP API of a real server (serve's wiring, on
// 127.0.0.1:0) on a real redis-server, reading that Redis's INFO.
func TestRunAPIRedis(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	srv := servertest.With(t, server.Config{RedisURL: rs.URL(), Tokens: []auth.Token{{Role: auth.RoleOperate, Secret: benchToken}}})

	// 100 × 10: the serve's CPU is read from process_cpu_seconds_total, in 10 ms steps; a
	// thousand transitions through HTTP (under the race detector) take many of them.
	cfg := smallConfig()
	cfg.Tenants, cfg.Stages, cfg.Concurrency = 100, 10, 50
	cfg.URL, cfg.Token, cfg.RedisURL = srv.URL(), benchToken, rs.URL()
	res := run(t, cfg)
	requireCommon(t, res, 100, 10)
	assert.Equal(t, bench.ThroughAPI, res.Through)
	assert.Equal(t, "redis", res.Store)
	assert.Equal(t, srv.URL(), res.Config.URL)
	assert.Zero(t, res.Config.Workers, "the serve's, not the bench's")
	assert.Positive(t, res.ExecutorCPUUsPerTransition)
	assert.True(t, res.RedisMetrics)
	assert.Positive(t, res.RedisBytesPerTask)
	requireRedisUsage(t, res)
	assert.False(t, res.RoundTripsCounted)
	assert.Zero(t, res.RoundTrips)
	assert.Zero(t, res.RoundTripsPerTransition)

	// The plan's tenants are under the run's prefix, and the serve still has them: the run
	// deleted nothing.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := client.New(srv.URL(), benchToken, nil)
	task, err := c.TenantTask(ctx, res.RunID+"-t0000042")
	require.NoError(t, err)
	assert.Equal(t, res.RunID+"-t0000042", task.TenantID)
	assert.Equal(t, "COMPLETED", task.Status)
	p, err := c.Plan(ctx, task.PlanID, 0)
	require.NoError(t, err)
	assert.Equal(t, "bench-transitions", p.Name)
	_, err = c.TenantTask(ctx, "t0000042")
	assert.True(t, client.IsNotFound(err), "an unprefixed tenant: %v", err)
}

// TestRunAPIMemory runs the bench twice through the HTTP API of a server on the in-memory
// store, without Redis measurements: the second run's tenants do not meet the first's.
func TestRunAPIMemory(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	cfg := smallConfig()
	cfg.URL = srv.URL()
	first := run(t, cfg)
	requireCommon(t, first, 50, 3)
	assert.Equal(t, bench.ThroughAPI, first.Through)
	assert.Equal(t, "memory", first.Store)
	assert.False(t, first.RedisMetrics)
	assert.False(t, first.RoundTripsCounted)
	assert.Zero(t, first.RedisCPUUsPerTransition)
	assert.Zero(t, first.RedisCommandsPerTransition)
	assert.Empty(t, first.RedisCommands)
	assert.Zero(t, first.RedisBytesPerTask)

	second := run(t, cfg)
	requireCommon(t, second, 50, 3)
	assert.NotEqual(t, first.RunID, second.RunID)
}

// TestRunAPIRefuses checks the errors of a run through the API before it measures anything.
func TestRunAPIRefuses(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	authed := servertest.With(t, server.Config{Tokens: []auth.Token{{Role: auth.RoleOperate, Secret: benchToken}}})
	cfg := smallConfig()
	cfg.URL = authed.URL()
	_, err := bench.Run(ctx, cfg)
	require.Error(t, err, "no token")
	assert.Contains(t, err.Error(), "401")

	// --redis names a Redis the serve does not use: its INFO would measure nothing of it.
	cfg.Token, cfg.RedisURL = benchToken, "redis://127.0.0.1:1/0"
	_, err = bench.Run(ctx, cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "in-memory store")

	cfg.URL = "http://127.0.0.1:1"
	_, err = bench.Run(ctx, cfg)
	require.Error(t, err, "nothing listens")
	assert.Contains(t, err.Error(), "not ready")
}
