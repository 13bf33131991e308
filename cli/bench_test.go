package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/cli"
)

func runBench(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := cli.Main(ctx, append([]string{"bench"}, args...), &stdout, &stderr)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

var smallBench = []string{"--tenants", "20", "--stages", "2", "--accept-tenants", "50", "--query-rate", "50", "--query-duration", "100ms"}

func TestBenchJSON(t *testing.T) {
	t.Parallel()
	r := runBench(t, append(smallBench, "-o", "json")...)
	requireCode(t, cli.ExitOK, r)
	var got struct {
		Store             string  `json:"store"`
		Transitions       int     `json:"transitions"`
		TransitionsPerSec float64 `json:"transitionsPerSec"`
		TasksPerSec       float64 `json:"tasksPerSec"`
		AcceptMs          float64 `json:"acceptMs"`
		QueryP99Ms        float64 `json:"queryP99Ms"`
		RedisMetrics      bool    `json:"redisMetrics"`
		Config            struct {
			Tenants int `json:"tenants"`
		} `json:"config"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got), r.stdout)
	assert.Equal(t, "memory", got.Store)
	assert.Equal(t, 40, got.Transitions)
	assert.Positive(t, got.TransitionsPerSec)
	assert.Positive(t, got.TasksPerSec)
	assert.Positive(t, got.AcceptMs)
	assert.Positive(t, got.QueryP99Ms)
	assert.False(t, got.RedisMetrics)
	assert.Equal(t, 20, got.Config.Tenants)
}

func TestBenchTable(t *testing.T) {
	t.Parallel()
	r := runBench(t, smallBench...)
	requireCode(t, cli.ExitOK, r)
	for _, want := range []string{"stage transitions/s", "≥ 30000", "n/a (memory)", "accept 50-tenant plan", "tenant query p99"} {
		assert.Contains(t, r.stdout, want)
	}
}

func TestBenchUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--tenants", "0"},
		{"--stages", "-1"},
		{"--query-rate", "0"},
		{"--query-duration", "0s"},
		{"--concurrency", "1001"},
		{"--tenants", "many"},
		{"extra"},
	} {
		r := runBench(t, args...)
		requireCode(t, cli.ExitUsage, r)
		assert.True(t, strings.HasPrefix(r.stderr, "error: "), "%v: %s", args, r.stderr)
	}
}
