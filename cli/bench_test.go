package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/auth"
	"github.com/executor-dev/executor/cli"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
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
		Through           string  `json:"through"`
		ExecutorCPU       float64 `json:"executorCpuUsPerTransition"`
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
	assert.Equal(t, "use cases", got.Through)
	assert.Positive(t, got.ExecutorCPU)
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
	for _, want := range []string{"stage transitions/s", "≥ 30000", "n/a (memory)", "accept 50-tenant plan", "tenant query p99",
		"use cases", "executor CPU/transition", "≤ 25µs (10000 × 10)", "Redis CPU/transition", "≤ 12µs (10000 × 10)",
		"Redis commands/transition", "Redis script calls/transition"} {
		assert.Contains(t, r.stdout, want)
	}
	assert.Regexp(t, `(?m)^executor CPU/transition\s+\d+\.\dµs\s`, r.stdout)
	assert.Regexp(t, `(?m)^Redis CPU/transition\s+n/a \(memory\)`, r.stdout)
}

func TestBenchRedisTable(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	r := runBench(t, append(smallBench, "--redis", rs.URL())...)
	requireCode(t, cli.ExitOK, r)
	assert.NotContains(t, r.stdout, "n/a")
	assert.Regexp(t, `(?m)^Redis CPU/transition\s+\d+\.\dµs\s`, r.stdout)
	assert.Regexp(t, `(?m)^Redis commands/transition\s+\d+\.\d\d\s`, r.stdout)
	assert.Regexp(t, `(?m)^  evalsha\s+\d+\.\d\d/transition, \d+\.\dµs/call\s`, r.stdout)
}

func TestBenchURL(t *testing.T) {
	t.Parallel()
	const token = "cli-bench-token-0123456789"
	srv := servertest.With(t, server.Config{Tokens: []auth.Token{{Role: auth.RoleOperate, Secret: token}}})
	r := runBench(t, append(smallBench, "--url", srv.URL(), "--token", token)...)
	requireCode(t, cli.ExitOK, r)
	assert.Regexp(t, `(?m)^through\s+HTTP API `+regexp.QuoteMeta(srv.URL())+`\s`, r.stdout)
	assert.Contains(t, r.stdout, "the serve's workers")
	assert.Regexp(t, `(?m)^Redis round trips/transition\s+n/a \(memory\)`, r.stdout)

	r = runBench(t, append(smallBench, "--url", srv.URL())...)
	requireCode(t, cli.ExitFailure, r)
	assert.Contains(t, r.stderr, "401")
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

func TestBenchUsageURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--url", "127.0.0.1:8080"}, "--url"},
		{[]string{"--url", "ftp://127.0.0.1:8080"}, "--url"},
		{[]string{"--url", "http://"}, "--url"},
		{[]string{"--url", "http://127.0.0.1:8080", "--workers", "8"}, "--workers"},
		{[]string{"--url", "http://127.0.0.1:8080", "--prefix", "x:"}, "--prefix"},
	} {
		r := runBench(t, tc.args...)
		requireCode(t, cli.ExitUsage, r)
		assert.True(t, strings.HasPrefix(r.stderr, "error: "), "%v: %s", tc.args, r.stderr)
		assert.Contains(t, r.stderr, tc.flag, tc.args)
	}
}
