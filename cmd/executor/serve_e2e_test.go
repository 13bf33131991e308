package main_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/wire"
)

// unreachedStart bounds the start of an executor whose Redis does not answer (its channels'
// subscriptions each wait a while before going on in the background).
const unreachedStart = 30 * time.Second

// spawnServing starts `executor serve` like startExecutor, but waits for its "executor
// serving" log line rather than for GET /healthz within healthTimeout.
func spawnServing(t *testing.T, name, redisURL string, extra ...string) *executorProc {
	t.Helper()
	p := spawnExecutor(t, name, redisURL, extra...)
	require.Eventually(t, func() bool {
		return strings.Contains(p.output.String(), `"msg":"executor serving"`) || p.hasExited()
	}, unreachedStart, 20*time.Millisecond, "%s never served", name)
	require.False(t, p.hasExited(), "%s exited: %v\n%s", name, p.err, p.output.String())
	return p
}

// readyz returns GET /readyz's status and body.
func readyz(t *testing.T, p *executorProc) (int, wire.Health) {
	t.Helper()
	resp, err := http.Get(p.URL() + "/readyz")
	require.NoError(t, err)
	defer resp.Body.Close()
	var h wire.Health
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
	return resp.StatusCode, h
}

// waitExit waits up to limit for the process to exit and requires a clean exit.
func waitExit(t *testing.T, p *executorProc, limit time.Duration, why string) {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(limit):
		require.FailNow(t, p.name+" did not exit: "+why, "after %s\n%s", limit, p.output.String())
	}
	require.NoError(t, p.err, "%s exits 0\n%s", p.name, p.output.String())
}

// An executor whose Redis does not answer at start is not ready and refuses plans until it
// reaches Redis; then it takes them, on Redis.
func TestServeNotReadyUntilRedisReached(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	rs.Kill()
	// alone: before this executor ever reached Redis, even that does not take plans.
	a := spawnServing(t, "A", rs.URL(), "--topology", "alone")
	code, h := readyz(t, a)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "unavailable", h.Status)
	assert.Contains(t, h.Reason, "redis not reached yet since start")
	assert.Contains(t, a.output.String(), `"redis":"unreachable"`, "the serving line says Redis is unreachable")

	planFile := writePlan(t, wire.PlanRequest{Name: "unreached", Stages: []wire.StageRequest{{Name: "one", Kind: "noop"}},
		Tenants: []wire.TenantRequest{{ID: "nr-1"}}})
	r := a.cli(t, "submit", "-f", planFile)
	requireExit(t, 1, r)
	assert.Contains(t, r.stderr, "503")

	rs.Restart()
	require.Eventually(t, func() bool { code, _ := readyz(t, a); return code == http.StatusOK },
		pollTimeout, pollInterval, "ready once Redis answers")
	assert.Contains(t, a.output.String(), `"msg":"redis reached"`)
	r = a.cli(t, "submit", "-f", planFile, "-o", "json")
	requireExit(t, 0, r)
	submitted := decode[wire.Plan](t, r.stdout)
	n, err := rs.Client().Exists(context.Background(), rediskey.New("").Plan(submitted.PlanID)).Result()
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "the plan is written to Redis")
}

// The two topologies cannot mix on one Redis: an executor refuses to start alone where another
// live executor is registered, and a shared one refuses to join a Redis where one runs alone;
// each exits 1 naming the other executor and what to do. Both report their topology in
// /readyz and `executor executors`.
func TestServeTopologiesDoNotMix(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	shared := startExecutor(t, "S", rs.URL(), "--name", "exec-shared")
	_, h := readyz(t, shared)
	assert.Equal(t, "shared", h.Topology)

	refused := spawnExecutor(t, "A", rs.URL(), "--name", "exec-alone", "--topology", "alone")
	waitRefused(t, refused, "exec-shared", "--topology shared")

	shared.kill(t) // its liveness key expires within the lease TTL
	alone := startExecutorEventually(t, "A2", rs.URL(), "--name", "exec-alone", "--topology", "alone")
	_, h = readyz(t, alone)
	assert.Equal(t, "alone", h.Topology)
	r := alone.cli(t, "executors", "-o", "json")
	requireExit(t, 0, r)
	list := decode[wire.ExecutorList](t, r.stdout)
	require.NotEmpty(t, list.Executors)
	for _, e := range list.Executors {
		if e.Name == "exec-alone" {
			assert.Equal(t, "alone", e.Topology)
		}
	}

	joining := spawnExecutor(t, "S2", rs.URL(), "--name", "exec-shared-2")
	waitRefused(t, joining, "exec-alone", "runs alone")
}

// waitRefused waits for p to exit 1 with an error naming other and saying want.
func waitRefused(t *testing.T, p *executorProc, other, want string) {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(healthTimeout):
		require.FailNow(t, p.name+" was not refused", p.output.String())
	}
	require.Error(t, p.err, "%s exits non-zero", p.name)
	out := p.output.String()
	assert.Contains(t, out, "topology conflict", p.name)
	assert.Contains(t, out, other, p.name)
	assert.Contains(t, out, want, p.name)
}

// startExecutorEventually starts an executor that may be refused for a while (a dead
// executor's liveness key has not expired yet): it tries again until it serves.
func startExecutorEventually(t *testing.T, name, redisURL string, extra ...string) *executorProc {
	t.Helper()
	deadline := time.Now().Add(3*leaseTTL + healthTimeout)
	for {
		p := spawnExecutor(t, name, redisURL, extra...)
		if p.waitHealthy(t) {
			return p
		}
		require.True(t, time.Now().Before(deadline), "%s never started:\n%s", name, p.output.String())
		time.Sleep(200 * time.Millisecond)
	}
}

// With a Redis that does not answer, go-redis's own complaints (failed dials) go through the
// executor's JSON log: every line of stderr is one JSON record.
func TestServeLogsOnlyJSONWithRedisDown(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	rs.Kill()
	a := spawnServing(t, "A", rs.URL())
	for range 10 { // traffic that makes the client dial
		code, _ := readyz(t, a)
		require.Equal(t, http.StatusServiceUnavailable, code)
		time.Sleep(200 * time.Millisecond)
	}
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGTERM))
	waitExit(t, a, 20*time.Second, "after SIGTERM")

	goRedis := 0
	for line := range strings.Lines(a.output.String()) {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), "a line that is not JSON: %q", line)
		if rec["component"] == "go-redis" {
			goRedis++
			assert.Equal(t, "WARN", rec["level"])
		}
	}
	assert.Positive(t, goRedis, "go-redis complained, through slog")
}

// A second SIGTERM during the drain cuts it short: the sleeping stage is cancelled at once
// (not after --shutdown-timeout's 30 s), the process exits, and the task is INTERRUPTED with
// its checkpoint intact, as another executor on the same Redis sees it.
func TestSecondSIGTERMCutsTheDrainShort(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	a := startExecutor(t, "A", rs.URL(), "--shutdown-timeout", "30s")
	planFile := writePlan(t, wire.PlanRequest{Name: "cut-short", Stages: []wire.StageRequest{
		{Name: "first", Kind: "noop"},
		{Name: "bake", Kind: "sleep", Params: map[string]any{"duration": "30s"}},
	}, Tenants: []wire.TenantRequest{{ID: "cs-1"}}})
	requireExit(t, 0, a.cli(t, "submit", "-f", planFile))
	pollTenant(t, a, "cs-1", "the sleep stage runs", nil, func(tk wire.Task) bool {
		return tk.Status == "RUNNING" && tk.Checkpoint != nil && len(tk.Checkpoint.CompletedStages) == 1
	})

	require.NoError(t, a.cmd.Process.Signal(syscall.SIGTERM))
	require.Eventually(t, func() bool { return strings.Contains(a.output.String(), "executor draining") },
		10*time.Second, 10*time.Millisecond, "A drains")
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGTERM))
	waitExit(t, a, 10*time.Second, "a second SIGTERM cancels the running stage at once")
	assert.Contains(t, a.output.String(), "cut short by a second signal")

	b := startExecutor(t, "B", rs.URL())
	tk := pollTenant(t, b, "cs-1", "INTERRUPTED", nil, func(tk wire.Task) bool { return tk.Status == "INTERRUPTED" })
	require.NotNil(t, tk.LastError)
	assert.Equal(t, "shutdown", tk.LastError.Class)
	assert.Equal(t, "bake", tk.LastError.Stage)
	require.NotNil(t, tk.Checkpoint)
	assert.Equal(t, []string{"first"}, tk.Checkpoint.CompletedStages)
}
