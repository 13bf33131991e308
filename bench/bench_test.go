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
	assert.Len(t, res.RunID, 6)
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
	assert.Equal(t, bench.ThroughUseCases, res.Through)
	// getrusage has a microsecond resolution: a run of 150 transitions costs far more.
	assert.Positive(t, res.ExecutorCPUUsPerTransition)
	assert.False(t, res.RedisMetrics)
	assert.False(t, res.RoundTripsCounted)
	assert.Zero(t, res.RoundTripsPerTransition)
	assert.Zero(t, res.RedisBytesPerTask)
	assert.Zero(t, res.RedisCPUUsPerTransition)
	assert.Zero(t, res.RedisCommandsPerTransition)
	assert.Zero(t, res.RedisScriptCallsPerTransition)
	assert.Empty(t, res.RedisCommands)
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
	cfg.Topology = "alone" // batches (the hook counts one per batch); shared streams commands
	res := run(t, cfg)
	requireCommon(t, res, 20, 20)
	assert.Equal(t, "redis", res.Store)
	assert.Equal(t, bench.ThroughUseCases, res.Through)
	assert.True(t, res.RedisMetrics)
	assert.True(t, res.RoundTripsCounted)
	assert.Positive(t, res.RoundTripsPerTransition)
	assert.LessOrEqual(t, res.RoundTripsPerTransition, 1.0)
	assert.Positive(t, res.RedisBytesPerTask)
	assert.Positive(t, res.ExecutorCPUUsPerTransition)
	requireRedisUsage(t, res)

	// The run deleted its own keys and nothing else.
	keys, err := other.Keys(context.Background(), "*").Result()
	require.NoError(t, err)
	assert.Equal(t, []string{"someone-else:key"}, keys)
}

// requireRedisUsage checks Redis's CPU and commands per transition and their breakdown.
func requireRedisUsage(t *testing.T, res bench.Result) {
	t.Helper()
	assert.Positive(t, res.RedisCPUUsPerTransition)
	// Every transition writes its task: at least one command, run by a script at times.
	assert.GreaterOrEqual(t, res.RedisCommandsPerTransition, 1.0)
	assert.Positive(t, res.RedisScriptCallsPerTransition)
	assert.LessOrEqual(t, res.RedisScriptCallsPerTransition, res.RedisCommandsPerTransition)
	require.NotEmpty(t, res.RedisCommands)
	var sum float64
	names := map[string]bool{}
	for i, c := range res.RedisCommands {
		assert.NotEmpty(t, c.Name)
		assert.False(t, names[c.Name], "%s listed twice", c.Name)
		names[c.Name] = true
		assert.Positive(t, c.CallsPerTransition, c.Name)
		assert.GreaterOrEqual(t, c.UsecPerCall, 0.0, c.Name)
		if i > 0 {
			assert.LessOrEqual(t, c.CallsPerTransition, res.RedisCommands[i-1].CallsPerTransition, "sorted by calls descending")
		}
		sum += c.CallsPerTransition
	}
	assert.True(t, names["evalsha"], "evalsha in %v", names)
	assert.InDelta(t, res.RedisCommandsPerTransition, sum, 1e-9)
}

func TestRunRejectsBadConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg   bench.Config
		field string
	}{
		{bench.Config{Tenants: -1}, "tenants"},
		{bench.Config{Stages: -1}, "stages"},
		{bench.Config{QueryRate: -5}, "queryRate"},
		{bench.Config{QueryDuration: -time.Second}, "queryDuration"},
		{bench.Config{Concurrency: 1001}, "concurrency"},
		{bench.Config{URL: "127.0.0.1:8080"}, "url"},
		{bench.Config{URL: "ftp://127.0.0.1"}, "url"},
		{bench.Config{URL: "http://"}, "url"},
		{bench.Config{Topology: "cluster"}, "topology"},
		{bench.Config{StageDuration: -time.Second}, "stageDuration"},
		{bench.Config{Executors: -1}, "executors"},
		{bench.Config{Executors: 2}, "executors"}, // on memory
		{bench.Config{Executors: 2, RedisURL: "redis://127.0.0.1:1/0", URL: "http://127.0.0.1:1"}, "executors"},
	} {
		_, err := bench.Run(context.Background(), tc.cfg)
		require.Error(t, err, tc.field)
		assert.True(t, strings.HasPrefix(err.Error(), "bench: "+tc.field+" must be"), err.Error())
	}
}

// The deployment shape: sleep stages, two executors on one Redis, tenant queries during the
// rollout, the makespan against the ideal and what a task in flight costs.
//
// Not parallel, on purpose: what a task in flight costs is read from this process's live heap
// and goroutines, which the parallel tests' executors would change meanwhile; Go runs the
// parallel tests only once every sequential one has finished.
func TestRunDeploymentShape(t *testing.T) {
	srv := redistest.Start(t)
	cfg := bench.Config{RedisURL: srv.URL(), Prefix: "bd:", Tenants: 40, Stages: 2, Concurrency: 20, Workers: 5,
		Executors: 2, StageDuration: 300 * time.Millisecond, QueryRate: 40}
	res := run(t, cfg)
	assert.Equal(t, 80, res.Transitions)
	assert.Equal(t, 2, res.Config.Executors)
	assert.Zero(t, res.Config.AcceptTenants, "no accept plan")
	assert.Zero(t, res.AcceptMs)
	// 10 tasks at once (2 executors × 5 workers, under the plan's 20): 4 waves of 2 × 300 ms.
	assert.Equal(t, 10, res.InFlight)
	assert.InDelta(t, 2400, res.IdealMs, 1e-9)
	assert.GreaterOrEqual(t, res.MakespanRatio, 1.0, "no executor beats the ideal")
	assert.InDelta(t, res.PlanMs/res.IdealMs, res.MakespanRatio, 1e-9)
	assert.True(t, res.QueriesDuringRollout)
	assert.Positive(t, res.Queries)
	assert.Zero(t, res.QueryErrors)
	assert.GreaterOrEqual(t, res.QueryP99Ms, res.QueryP50Ms)
	assert.Less(t, res.QueryRateGot, 2.0*40, "paced, and only while the plan ran")
	// Each task in flight holds its run's goroutine, sleeping in its stage, and no other: the
	// lease's loss and the heartbeats are funcs and timers, not goroutines.
	t.Logf("goroutines per task in flight: %.2f", res.GoroutinesPerRun)
	assert.InDelta(t, 1.0, res.GoroutinesPerRun, 0.3)
	assert.Positive(t, res.MemoryPerRunBytes)
	assert.False(t, res.RoundTripsCounted, "no hook on the executor's client: serve has none")
	requireRedisUsage(t, res)

	// Both executors ran tasks: the second one's stage transitions are in the store.
	ctx := context.Background()
	keys, err := srv.Client().Keys(ctx, "*").Result()
	require.NoError(t, err)
	assert.Empty(t, keys, "the run deleted its keys")
}
