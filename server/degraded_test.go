package server_test

// Acceptance tests of degraded mode (docs/design.md §6), over HTTP against the real wiring and a
// private redis-server per test: Redis killed mid-plan and back empty, Redis frozen longer
// than the client timeouts, and an executor started while Redis is down.
//
// Every plan runs the "bake" stage kind registered here, which sleeps params.ms milliseconds
// and records each (tenant, stage) call, so that a test can assert that no stage ran twice
// and none was skipped whatever Redis did.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/stagekind"
	"github.com/executor-dev/executor/wire"
)

// Generous bounds: the machine is a shared 2-core box.
const (
	dgWait     = 60 * time.Second // a plan to end, Redis to catch up
	dgReady    = 20 * time.Second // /readyz to switch
	dgPollTick = 20 * time.Millisecond
)

// dgLogger is nil (servertest discards the executor's logs) unless DG_LOG is set: then the
// executor logs at debug level to stderr, to see what degraded mode did when a test fails.
func dgLogger() *slog.Logger {
	if os.Getenv("DG_LOG") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// dgBake is the "bake" stage kind: it sleeps params.ms milliseconds (honouring ctx)
// and counts, per tenant and stage, the calls it got and the calls that completed.
type dgBake struct {
	mu        sync.Mutex
	calls     map[string]int // "tenant/stage" -> calls
	completed int            // calls that slept their full time
}

func newDGBake() *dgBake { return &dgBake{calls: map[string]int{}} }

func dgBakeKey(tenant, stage string) string { return tenant + "/" + stage }

// register adds the kind to an executor's registry (servertest.With's register func).
func (b *dgBake) register(reg *stagekind.Registry) {
	if err := reg.Register("bake", stage.HandlerFunc(b.run)); err != nil {
		panic(err)
	}
}

func (b *dgBake) run(ctx context.Context, req stage.Request) (json.RawMessage, error) {
	ms, err := dgBakeMillis(req.Params["ms"])
	if err != nil {
		return nil, stage.Permanent(err)
	}
	b.mu.Lock()
	b.calls[dgBakeKey(req.TenantID, req.Stage)]++
	b.mu.Unlock()
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
	}
	b.mu.Lock()
	b.completed++
	b.mu.Unlock()
	return json.Marshal(map[string]int64{"baked": ms})
}

func dgBakeMillis(v any) (int64, error) {
	switch n := v.(type) {
	case float64:
		return int64(n), nil
	case int:
		return int64(n), nil
	case int64:
		return n, nil
	case json.Number:
		return n.Int64()
	case string:
		return strconv.ParseInt(n, 10, 64)
	}
	return 0, fmt.Errorf("bake: params.ms must be a number, not %T", v)
}

func (b *dgBake) completedCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.completed
}

// requireEachRanOnce asserts that every stage of every tenant was called exactly once, and
// nothing else was called.
func (b *dgBake) requireEachRanOnce(t *testing.T, tenants, stages []string) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	want := map[string]int{}
	for _, tn := range tenants {
		for _, st := range stages {
			want[dgBakeKey(tn, st)] = 1
		}
	}
	var twice, skipped []string
	for k := range want {
		switch n := b.calls[k]; {
		case n == 0:
			skipped = append(skipped, k)
		case n > 1:
			twice = append(twice, fmt.Sprintf("%s×%d", k, n))
		}
	}
	assert.Empty(t, twice, "stages that ran more than once")
	assert.Empty(t, skipped, "stages that never ran")
	assert.Len(t, b.calls, len(want), "calls: %v", b.calls)
}

// dgPlan describes a plan of len(tenants) tenants running len(stageMs) bake stages.
type dgPlan struct {
	name           string
	tenants        []string
	stages         []string
	stageMs        []int
	maxConcurrency int
}

func newDGPlan(name string, tenants int, stageMs []int, maxConcurrency int) dgPlan {
	p := dgPlan{name: name, stageMs: stageMs, maxConcurrency: maxConcurrency}
	for i := range tenants {
		p.tenants = append(p.tenants, fmt.Sprintf("%s-t%02d", name, i+1))
	}
	for i := range stageMs {
		p.stages = append(p.stages, fmt.Sprintf("bake-%d", i+1))
	}
	return p
}

func (p dgPlan) request() wire.PlanRequest {
	req := wire.PlanRequest{Name: p.name, MaxConcurrency: p.maxConcurrency}
	for i, st := range p.stages {
		req.Stages = append(req.Stages, wire.StageRequest{Name: st, Kind: "bake", Params: map[string]any{"ms": p.stageMs[i]}})
	}
	for _, tn := range p.tenants {
		req.Tenants = append(req.Tenants, wire.TenantRequest{ID: tn})
	}
	return req
}

// dgClient talks to one executor over HTTP, with a transport of its own (so that its idle
// connections can be closed when a test counts goroutines).
type dgClient struct {
	t    *testing.T
	base string
	http *http.Client
}

func newDGClient(t *testing.T, srv *server.Server) *dgClient {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &dgClient{t: t, base: srv.URL(), http: &http.Client{Transport: tr, Timeout: 2 * dgWait}}
}

// do sends a request and decodes a JSON answer into out (when not nil); it returns the
// response (body closed).
func (c *dgClient) do(method, path string, body, out any) *http.Response {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(c.t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	require.NoError(c.t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	require.NoError(c.t, err, "%s %s", method, path)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	if out != nil && len(raw) > 0 {
		require.NoError(c.t, json.Unmarshal(raw, out), "%s %s: %s", method, path, raw)
	}
	return resp
}

// submit posts p and requires 201 Created.
func (c *dgClient) submit(p dgPlan) wire.Plan {
	c.t.Helper()
	var out wire.Plan
	resp := c.do(http.MethodPost, "/v1/plans", p.request(), &out)
	require.Equal(c.t, http.StatusCreated, resp.StatusCode, "POST /v1/plans")
	require.NotEmpty(c.t, out.PlanID)
	require.Len(c.t, out.TaskIDs, len(p.tenants))
	return out
}

// waitCompleted long-polls the plan until it ends and requires it COMPLETED.
func (c *dgClient) waitCompleted(planID string) wire.Plan {
	c.t.Helper()
	var out wire.Plan
	deadline := time.Now().Add(dgWait)
	for {
		resp := c.do(http.MethodGet, "/v1/plans/"+planID+"?wait=20s", nil, &out)
		require.Equal(c.t, http.StatusOK, resp.StatusCode)
		if out.Status == "COMPLETED" || out.Status == "FAILED" || out.Status == "CANCELLED" {
			break
		}
		require.True(c.t, time.Now().Before(deadline), "plan %s still %s after %v: %v", planID, out.Status, dgWait, out.Progress)
	}
	require.Equal(c.t, "COMPLETED", out.Status, "plan %s: progress %v", planID, out.Progress)
	return out
}

// readyz is GET /readyz: 200 while Redis answers, 503 (not ready: a load balancer prefers
// the executors that reach Redis) while the executor runs degraded.
func (c *dgClient) readyz() wire.Health {
	c.t.Helper()
	var h wire.Health
	resp := c.do(http.MethodGet, "/readyz", nil, &h)
	want := http.StatusOK
	if h.Redis == "degraded" || h.Redis == "unavailable" { // unavailable: the probe's write or read failed
		want = http.StatusServiceUnavailable
	}
	require.Equal(c.t, want, resp.StatusCode, "/readyz with redis %q: %+v", h.Redis, h)
	return h
}

// waitRedis polls /readyz until it reports redis as want ("ok" or "degraded") and returns
// that answer.
func (c *dgClient) waitRedis(want string) wire.Health {
	c.t.Helper()
	var h wire.Health
	dgPoll(c.t, dgReady, func() bool {
		h = c.readyz()
		return h.Redis == want
	}, "/readyz never reported redis %q", want)
	return h
}

// dgRequireDegraded checks a degraded /readyz answer.
func dgRequireDegraded(t *testing.T, h wire.Health) {
	t.Helper()
	require.Equal(t, "degraded", h.Status)
	require.Equal(t, "degraded", h.Redis)
	require.NotEmpty(t, h.Reason, "degraded without a reason")
	require.NotNil(t, h.Since, "degraded without since")
	require.False(t, h.Since.IsZero(), "degraded since the zero time")
	require.NotNil(t, h.Journal, "degraded without journal")
	require.GreaterOrEqual(t, *h.Journal, 0)
}

// tenantTask is GET /v1/tenants/{t}/task (with the checkpoint summary).
func (c *dgClient) tenantTask(tenant string) wire.Task {
	c.t.Helper()
	var out wire.Task
	resp := c.do(http.MethodGet, "/v1/tenants/"+tenant+"/task", nil, &out)
	require.Equal(c.t, http.StatusOK, resp.StatusCode)
	return out
}

func (c *dgClient) planTasks(planID string) []wire.Task {
	c.t.Helper()
	var out wire.TaskList
	resp := c.do(http.MethodGet, "/v1/plans/"+planID+"/tasks", nil, &out)
	require.Equal(c.t, http.StatusOK, resp.StatusCode)
	return out.Tasks
}

// dgPoll calls cond every dgPollTick until it holds, failing the test after limit.
func dgPoll(t *testing.T, limit time.Duration, cond func() bool, msgAndArgs ...any) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			require.Fail(t, "condition not met within "+limit.String(), msgAndArgs...)
		}
		time.Sleep(dgPollTick)
	}
}

// dgWaitCompletions waits until the recorder saw n stage completions.
func dgWaitCompletions(t *testing.T, rec *dgBake, n int) {
	t.Helper()
	dgPoll(t, dgWait, func() bool { return rec.completedCount() >= n }, "fewer than %d stage completions", n)
}

// dgHoldOutage keeps polling /readyz and the plan for d after start: /readyz must say degraded
// (a 503) throughout (Redis is away, the executor must not claim otherwise) and the plan must
// still be served (from memory). It returns how many rounds it made.
func dgHoldOutage(t *testing.T, c *dgClient, planID string, start time.Time, d time.Duration) int {
	t.Helper()
	n := 0
	for time.Since(start) < d {
		dgRequireDegraded(t, c.readyz())
		var p wire.Plan
		resp := c.do(http.MethodGet, "/v1/plans/"+planID, nil, &p)
		require.Equal(t, http.StatusOK, resp.StatusCode, "GET the plan while Redis is away")
		require.Contains(t, []string{"RUNNING", "COMPLETED"}, p.Status)
		n++
		time.Sleep(50 * time.Millisecond)
	}
	return n
}

// dgRequireRedisMatchesAPI checks that Redis (a fresh client) holds the plan, and every task with
// its checkpoint and tenant index, equal to what the API answers, and that every task ran
// all its stages.
func dgRequireRedisMatchesAPI(t *testing.T, c *dgClient, rdb *redis.Client, p dgPlan, planID string) {
	t.Helper()
	ctx := context.Background()

	planHash, err := rdb.HGetAll(ctx, "executor:plan:{"+planID+"}").Result()
	require.NoError(t, err)
	require.NotEmpty(t, planHash, "executor:plan:{%s} missing", planID)
	assert.Equal(t, planID, planHash["planId"])
	assert.Equal(t, "COMPLETED", planHash["status"], "plan status in Redis")
	_, err = rdb.ZScore(ctx, "executor:plans", planID).Result()
	require.NoError(t, err, "plan %s not in executor:plans", planID)

	byTenant := map[string]wire.Task{}
	for _, tk := range c.planTasks(planID) {
		byTenant[tk.TenantID] = tk
	}
	require.Len(t, byTenant, len(p.tenants))

	for _, tenant := range p.tenants {
		listed, ok := byTenant[tenant]
		require.True(t, ok, "tenant %s not in the plan's tasks", tenant)
		view := c.tenantTask(tenant)
		require.Equal(t, listed.TaskID, view.TaskID, tenant)
		id := view.TaskID

		// The API's own view: every stage done, none lost.
		assert.Equal(t, "COMPLETED", view.Status, tenant)
		assert.Equal(t, len(p.stages), view.CurrentStage, tenant)
		require.NotNil(t, view.Checkpoint, "tenant %s: no checkpoint in the API", tenant)
		assert.Equal(t, p.stages, view.Checkpoint.CompletedStages, "tenant %s: API checkpoint", tenant)

		h, err := rdb.HGetAll(ctx, "executor:task:{"+id+"}").Result()
		require.NoError(t, err)
		require.NotEmpty(t, h, "executor:task:{%s} (tenant %s) missing from Redis", id, tenant)
		assert.Equal(t, view.Status, h["status"], "tenant %s: status", tenant)
		assert.Equal(t, strconv.Itoa(view.Attempt), h["attempt"], "tenant %s: attempt", tenant)
		assert.Equal(t, strconv.Itoa(view.CurrentStage), h["stage"], "tenant %s: stage", tenant)
		assert.Equal(t, view.TenantID, h["tenantId"], "tenant %s: tenantId", tenant)
		assert.Equal(t, view.PlanID, h["planId"], "tenant %s: planId", tenant)
		assert.Equal(t, planID, h["planId"], "tenant %s: planId", tenant)
		assert.Equal(t, strconv.Itoa(len(view.Attempts)), h["ledger"], "tenant %s: ledger length", tenant)
		for n := range view.Attempts {
			assert.NotEmpty(t, h["l"+strconv.Itoa(n)], "tenant %s: ledger entry l%d", tenant, n)
		}

		raw, err := rdb.Get(ctx, "executor:ckpt:{"+id+"}").Result()
		require.NoError(t, err, "executor:ckpt:{%s} (tenant %s)", id, tenant)
		var cp struct {
			CompletedStages []string `json:"completedStages"`
		}
		require.NoError(t, json.Unmarshal([]byte(raw), &cp), "tenant %s: checkpoint %q", tenant, raw)
		assert.Equal(t, view.Checkpoint.CompletedStages, cp.CompletedStages, "tenant %s: checkpoint in Redis", tenant)
		assert.Len(t, cp.CompletedStages, len(p.stages), "tenant %s: completed stages in Redis", tenant)

		indexed, err := rdb.Get(ctx, "executor:index:tenant:{"+tenant+"}").Result()
		require.NoError(t, err, "executor:index:tenant:{%s}", tenant)
		assert.Equal(t, id, indexed, "tenant %s: tenant index", tenant)
	}
}

// Redis is killed (SIGKILL) once about 30 % of the stages completed, stays away ~3 s and comes
// back empty. The plan completes, every stage ran exactly once, and the write-back
// repopulates Redis with exactly what the API shows.
func TestRedisKilledMidPlanThenBackEmpty(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	rec := newDGBake()
	srv := servertest.With(t, server.Config{RedisURL: rs.URL(), Topology: server.TopologyAlone, LeaseTTL: 2 * time.Second, Logger: dgLogger()}, rec.register)
	c := newDGClient(t, srv)
	require.Equal(t, "ok", c.readyz().Redis)

	p := newDGPlan("killed", 20, []int{50, 200, 90, 160, 120}, 5)
	total := len(p.tenants) * len(p.stages)
	submitted := c.submit(p)

	dgWaitCompletions(t, rec, total*30/100)
	rs.Kill()
	killed := time.Now()
	t.Logf("redis killed after %d/%d stage completions", rec.completedCount(), total)

	h := c.waitRedis("degraded")
	dgRequireDegraded(t, h)
	sawDegraded := h.Redis == "degraded"
	t.Logf("readyz degraded %v after the kill: since %v, journal %d", time.Since(killed).Round(time.Millisecond), *h.Since, *h.Journal)

	n := dgHoldOutage(t, c, submitted.PlanID, killed, 3*time.Second)
	t.Logf("readyz degraded throughout the outage (%d answers); %d/%d stages completed", n, rec.completedCount(), total)
	rs.Restart() // empty
	restarted := time.Now()

	c.waitCompleted(submitted.PlanID)
	c.waitRedis("ok")
	t.Logf("readyz ok %v after the restart", time.Since(restarted).Round(time.Millisecond))

	require.True(t, sawDegraded)
	rec.requireEachRanOnce(t, p.tenants, p.stages)
	dgRequireRedisMatchesAPI(t, c, rs.Client(), p, submitted.PlanID)
}

// Redis is frozen (SIGSTOP) for ~3 s, longer than the executor's 1 s client timeouts, in the
// middle of a plan. The plan completes (no deadlock), /readyz says degraded while it is
// frozen, and after the thaw Redis catches up. No goroutine outlives the executor.
//
// Not parallel, on purpose: Go runs parallel tests only after every sequential top-level test
// has finished, so this test runs alone in the package and runtime.NumGoroutine() before and
// after the executor's life measures this executor's leaks alone. The executor lives in a
// subtest, so that its shutdown (servertest's cleanup) has run when the subtest returns.
func TestRedisFrozenLongerThanTheClientTimeout(t *testing.T) {
	rs := redistest.Start(t)
	rdb := rs.Client()
	require.NoError(t, rdb.Ping(context.Background()).Err())
	before := runtime.NumGoroutine()

	ok := t.Run("executor", func(t *testing.T) {
		rec := newDGBake()
		srv := servertest.With(t, server.Config{RedisURL: rs.URL(), Topology: server.TopologyAlone, LeaseTTL: 2 * time.Second, Logger: dgLogger()}, rec.register)
		frozen := false
		// Registered after servertest's cleanup, so it runs first: a test that fails while
		// Redis is frozen does not leave the executor's shutdown waiting on it.
		t.Cleanup(func() {
			if frozen {
				rs.Thaw()
			}
		})
		c := newDGClient(t, srv)
		require.Equal(t, "ok", c.readyz().Redis)

		p := newDGPlan("frozen", 10, []int{150, 80, 220, 120}, 4)
		total := len(p.tenants) * len(p.stages)
		submitted := c.submit(p)

		dgWaitCompletions(t, rec, total*30/100)
		rs.Freeze()
		frozen = true
		frozenAt := time.Now()
		t.Logf("redis frozen after %d/%d stage completions", rec.completedCount(), total)

		h := c.waitRedis("degraded")
		dgRequireDegraded(t, h)
		t.Logf("readyz degraded %v after the freeze: journal %d", time.Since(frozenAt).Round(time.Millisecond), *h.Journal)
		n := dgHoldOutage(t, c, submitted.PlanID, frozenAt, 3*time.Second)
		t.Logf("readyz degraded throughout the freeze (%d answers); %d/%d stages completed", n, rec.completedCount(), total)
		rs.Thaw()
		frozen = false
		thawed := time.Now()

		c.waitCompleted(submitted.PlanID)
		c.waitRedis("ok")
		t.Logf("readyz ok %v after the thaw", time.Since(thawed).Round(time.Millisecond))

		rec.requireEachRanOnce(t, p.tenants, p.stages)
		ctx := context.Background()
		for i, id := range submitted.TaskIDs {
			status, err := rdb.HGet(ctx, "executor:task:{"+id+"}", "status").Result()
			require.NoError(t, err, "task %s (tenant %s) in Redis", id, p.tenants[i])
			assert.Equal(t, "COMPLETED", status, "task %s (tenant %s) in Redis", id, p.tenants[i])
		}
		dgRequireRedisMatchesAPI(t, c, rdb, p, submitted.PlanID)
	})
	require.True(t, ok, "the executor subtest failed")

	// The executor is shut down: its goroutines (probe, lease watchdogs and their steps,
	// workers, HTTP connections, the go-redis pool) must all end.
	const margin = 2
	var now int
	if !assert.Eventually(t, func() bool {
		now = runtime.NumGoroutine()
		return now <= before+margin
	}, 20*time.Second, 50*time.Millisecond) {
		buf := make([]byte, 1<<20)
		t.Fatalf("goroutines: %d before the executor started, %d after it stopped (margin %d):\n%s",
			before, now, margin, buf[:runtime.Stack(buf, true)])
	}
	t.Logf("goroutines: %d before, %d after", before, runtime.NumGoroutine())
}

// An executor alone on its Redis whose Redis goes down serves, degraded, runs a new plan on
// memory, and writes it back once Redis is up.
func TestServeAloneTakesPlansWhileRedisIsDown(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	rec := newDGBake()
	srv := servertest.With(t, server.Config{RedisURL: rs.URL(), Topology: server.TopologyAlone, LeaseTTL: 2 * time.Second, Logger: dgLogger()}, rec.register)
	c := newDGClient(t, srv)
	rs.Kill()

	dgRequireDegraded(t, c.waitRedis("degraded"))

	p := newDGPlan("cold", 3, []int{30, 60}, 0)
	submitted := c.submit(p) // accepted by default while degraded
	c.waitCompleted(submitted.PlanID)
	dgRequireDegraded(t, c.readyz()) // nothing brought Redis back
	rec.requireEachRanOnce(t, p.tenants, p.stages)
	for _, tk := range c.planTasks(submitted.PlanID) {
		assert.Equal(t, "COMPLETED", tk.Status, tk.TenantID)
	}

	rs.Restart()
	c.waitRedis("ok")
	dgRequireRedisMatchesAPI(t, c, rs.Client(), p, submitted.PlanID)
}

// An executor sharing its Redis (the default topology) whose Redis does not answer (frozen)
// refuses new plans with a 503 problem, creating nothing, and accepts them again once Redis is
// back.
func TestServeRejectsNewPlansWhileRedisIsDown(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	rec := newDGBake()
	srv := servertest.With(t, server.Config{RedisURL: rs.URL(), LeaseTTL: 2 * time.Second, Logger: dgLogger()}, rec.register)
	c := newDGClient(t, srv)
	rs.Freeze()
	c.waitNotReady()

	p := newDGPlan("refused", 2, []int{20}, 0)
	var prob wire.Problem
	resp := c.do(http.MethodPost, "/v1/plans", p.request(), &prob)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, wire.ProblemContentType, resp.Header.Get("Content-Type"))
	assert.Equal(t, wire.ProblemUnavailable, prob.Type)
	assert.Equal(t, http.StatusServiceUnavailable, prob.Status)
	assert.NotEmpty(t, prob.Detail)
	// Shared: nothing is read from memory either.
	assert.Equal(t, http.StatusServiceUnavailable, c.do(http.MethodGet, "/v1/plans", nil, nil).StatusCode)

	rs.Thaw()
	c.waitRedis("ok")
	var list wire.PlanList
	require.Equal(t, http.StatusOK, c.do(http.MethodGet, "/v1/plans", nil, &list).StatusCode)
	assert.Empty(t, list.Plans, "a refused plan was created")
	submitted := c.submit(p)
	c.waitCompleted(submitted.PlanID)
	rec.requireEachRanOnce(t, p.tenants, p.stages)
	dgRequireRedisMatchesAPI(t, c, rs.Client(), p, submitted.PlanID)
}

// Redis is killed and restarted at once (empty) mid-plan, maybe too fast for any command to
// fail: the executor must still notice that Redis lost its data (a write finds no task, a
// read no plan) and write everything back. The plan completes, every stage ran exactly once,
// and Redis ends up holding what the API shows.
func TestRedisRestartedEmptyUnnoticedMidPlan(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	rec := newDGBake()
	srv := servertest.With(t, server.Config{RedisURL: rs.URL(), Topology: server.TopologyAlone, LeaseTTL: 2 * time.Second, Logger: dgLogger()}, rec.register)
	c := newDGClient(t, srv)
	require.Equal(t, "ok", c.readyz().Redis)

	p := newDGPlan("blink", 12, []int{60, 140, 100}, 4)
	total := len(p.tenants) * len(p.stages)
	submitted := c.submit(p)

	dgWaitCompletions(t, rec, total*40/100)
	rs.Kill()
	rs.Restart() // empty
	done := rec.completedCount()
	t.Logf("redis restarted empty after %d/%d stage completions", done, total)
	// No HTTP request yet (a GET of the plan would notice the loss by itself): the runs'
	// own writes must notice it.
	dgWaitCompletions(t, rec, done+4)

	c.waitCompleted(submitted.PlanID)
	c.waitRedis("ok")
	rec.requireEachRanOnce(t, p.tenants, p.stages)
	dgRequireRedisMatchesAPI(t, c, rs.Client(), p, submitted.PlanID)
}
