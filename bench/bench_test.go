package bench_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/bench"
	"github.com/executor-dev/executor/infra/redistest"
)

func smallConfig() bench.Config {
	return bench.Config{
		Tenants: 50, Stages: 3, Concurrency: 20, Workers: 16,
		AcceptTenants: 200, QueryRate: 200, QueryDuration: 200 * time.Millisecond,
	}
}

func run(t *testing.T, cfg bench.Config) bench.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := bench.Run(ctx, cfg)
	require.NoError(t, err)
	return res
}

// requireCommon checks the measurements both stores produce.
func requireCommon(t *testing.T, res bench.Result, tenants, stages int) {
	t.Helper()
	assert.Equal(t, tenants*stages, res.Transitions)
	assert.Positive(t, res.PlanMs)
	assert.Positive(t, res.TransitionsPerSec)
	assert.Positive(t, res.TasksPerSec)
	assert.InDelta(t, res.TransitionsPerSec/float64(stages), res.TasksPerSec, 1e-6)
	assert.Positive(t, res.AcceptMs)
	assert.Positive(t, res.Queries)
	assert.Zero(t, res.QueryErrors)
	assert.Positive(t, res.QueryP50Ms)
	assert.GreaterOrEqual(t, res.QueryP99Ms, res.QueryP50Ms)
	assert.Equal(t, tenants, res.Config.Tenants)
	assert.Equal(t, 200, res.Config.AcceptTenants)
}

func TestRunMemory(t *testing.T) {
	t.Parallel()
	res := run(t, smallConfig())
	requireCommon(t, res, 50, 3)
	assert.Equal(t, "memory", res.Store)
	assert.False(t, res.RedisMetrics)
	assert.Zero(t, res.RoundTripsPerTransition)
	assert.Zero(t, res.RedisBytesPerTask)
}

func TestRunRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	other := srv.Client()
	require.NoError(t, other.Set(context.Background(), "someone-else:key", "v", 0).Err())

	// 20 stages rather than 3: a task's fixed commands (its claim from the plan's queue and
	// its end there, its lease, fence bump, tenant release) are spread over its stages. 16
	// runs at once share round trips (the auto-pipeline), so the whole plan takes less than
	// one round trip per transition.
	cfg := smallConfig()
	cfg.Tenants, cfg.Stages = 20, 20
	cfg.RedisURL = srv.URL()
	cfg.Prefix = "bt:"
	res := run(t, cfg)
	requireCommon(t, res, 20, 20)
	assert.Equal(t, "redis", res.Store)
	assert.True(t, res.RedisMetrics)
	assert.Positive(t, res.RoundTripsPerTransition)
	assert.LessOrEqual(t, res.RoundTripsPerTransition, 1.0)
	assert.Positive(t, res.RedisBytesPerTask)

	// The run deleted its own keys and nothing else.
	keys, err := other.Keys(context.Background(), "*").Result()
	require.NoError(t, err)
	assert.Equal(t, []string{"someone-else:key"}, keys)
}

func TestRunRejectsNegative(t *testing.T) {
	t.Parallel()
	for _, cfg := range []bench.Config{{Tenants: -1}, {Stages: -1}, {QueryRate: -5}, {QueryDuration: -time.Second}, {Concurrency: 1001}} {
		_, err := bench.Run(context.Background(), cfg)
		require.Error(t, err)
		assert.True(t, strings.HasPrefix(err.Error(), "bench: "), err.Error())
	}
}
