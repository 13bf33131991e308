package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// call is one request the recording target received.
type call struct {
	tenant, stage string
	run           int
	start, end    time.Time
	cancelled     bool // the caller went away before the answer
}

// target is a loopback deployment target that records every call with its tenant, stage,
// run and time. GET /<tenant>/<stage>?ms=N answers after N ms (or when the caller goes
// away); ?failRun=R answers 400 (a permanent failure) to run R.
type target struct {
	srv *httptest.Server

	mu       sync.Mutex
	calls    []call
	inFlight map[string]bool // "<tenant>/<stage>" of calls not answered yet
}

func newTarget(t *testing.T) *target {
	t.Helper()
	tg := &target{inFlight: map[string]bool{}}
	tg.srv = httptest.NewServer(http.HandlerFunc(tg.serve))
	t.Cleanup(tg.srv.Close)
	return tg
}

func (tg *target) serve(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) != 2 {
		http.Error(w, "want /<tenant>/<stage>", http.StatusNotFound)
		return
	}
	c := call{tenant: parts[0], stage: parts[1], start: time.Now()}
	// Idempotency-Key: <planId>/<taskId>/<stage>/<run>.<attempt>
	key := strings.Split(r.Header.Get("Idempotency-Key"), "/")
	if len(key) == 4 {
		c.run, _ = strconv.Atoi(strings.Split(key[3], ".")[0])
	}
	k := c.tenant + "/" + c.stage
	tg.mu.Lock()
	tg.inFlight[k] = true
	tg.mu.Unlock()
	ms, _ := strconv.Atoi(r.URL.Query().Get("ms"))
	timer := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-r.Context().Done():
		c.cancelled = true
	}
	c.end = time.Now()
	tg.mu.Lock()
	delete(tg.inFlight, k)
	tg.calls = append(tg.calls, c)
	tg.mu.Unlock()
	if fail := r.URL.Query().Get("failRun"); fail != "" && fail == strconv.Itoa(c.run) {
		http.Error(w, "refused", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{}`))
}

// running reports whether tenant's stage is being called now.
func (tg *target) running(tenant, stage string) bool {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return tg.inFlight[tenant+"/"+stage]
}

// callsOf returns the calls of tenant's stage that have ended.
func (tg *target) callsOf(tenant, stage string) []call {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	var out []call
	for _, c := range tg.calls {
		if c.tenant == tenant && c.stage == stage {
			out = append(out, c)
		}
	}
	return out
}

// stageJSON is an http stage calling the target for the tenant and stage name; query is
// added to the URL.
func (tg *target) stageJSON(name, query string) string {
	return fmt.Sprintf(`{"name":%q,"kind":"http","retry":{"maxAttempts":1},"params":{"method":"GET","url":"%s/{{.TenantID}}/%s?%s"}}`,
		name, tg.srv.URL, name, query)
}

// twoExecutors starts executors A and B on one private redis-server. The lease TTL is long
// (a heartbeat every 10 s): a command that takes effect within a second did so through its
// signal or the run's next write, not a heartbeat.
func twoExecutors(t *testing.T) (a, b *server.Server) {
	t.Helper()
	rs := redistest.Start(t)
	cfg := server.Config{RedisURL: rs.URL(), LeaseTTL: 30 * time.Second}
	return servertest.With(t, cfg), servertest.With(t, cfg)
}

func submitPlan(t *testing.T, srv *server.Server, stages []string, tenants []string, extra string) wire.Plan {
	t.Helper()
	var ts []string
	for _, id := range tenants {
		ts = append(ts, fmt.Sprintf(`{"id":%q}`, id))
	}
	body := fmt.Sprintf(`{"name":"cluster","stages":[%s],"tenants":[%s]%s}`, strings.Join(stages, ","), strings.Join(ts, ","), extra)
	var p wire.Plan
	require.Equal(t, http.StatusCreated, cfHTTP(t, http.MethodPost, srv.URL()+"/v1/plans", body, &p))
	return p
}

func statusOf(t *testing.T, srv *server.Server, tenant string) string {
	t.Helper()
	var tk wire.Task
	cfHTTP(t, http.MethodGet, srv.URL()+"/v1/tenants/"+tenant+"/task", "", &tk)
	return tk.Status
}

func eventuallyRunning(t *testing.T, tg *target, tenant, stage string) {
	t.Helper()
	require.Eventually(t, func() bool { return tg.running(tenant, stage) }, 15*time.Second, 5*time.Millisecond,
		"%s's stage %s is called", tenant, stage)
}

// A cancel sent to B while A runs the tenant's long stage stops the stage within 1 s, no
// later stage is called, and the final status is the operator's, on both executors.
func TestCancelOnAnotherExecutorStopsTheRunMidStage(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	a, b := twoExecutors(t)
	submitPlan(t, a, []string{tg.stageJSON("push", "ms=0"), tg.stageJSON("bake", "ms=20000"), tg.stageJSON("check", "ms=0")},
		[]string{"cx-1"}, "")
	eventuallyRunning(t, tg, "cx-1", "bake")

	sent := time.Now()
	var tk wire.Task
	require.Equal(t, http.StatusOK, cfHTTP(t, http.MethodPost, b.URL()+"/v1/tenants/cx-1/cancel", "", &tk))
	assert.Equal(t, "CANCELLED", tk.Status)
	require.Eventually(t, func() bool { return len(tg.callsOf("cx-1", "bake")) == 1 }, 5*time.Second, 5*time.Millisecond)
	bake := tg.callsOf("cx-1", "bake")[0]
	assert.True(t, bake.cancelled, "the stage's request was cut short")
	assert.Less(t, bake.end.Sub(sent), time.Second, "the run stopped within 1 s of the cancel")

	time.Sleep(300 * time.Millisecond) // anything the run would still write or call
	assert.Empty(t, tg.callsOf("cx-1", "check"), "no later stage is called")
	for name, srv := range map[string]*server.Server{"A": a, "B": b} {
		assert.Equal(t, "CANCELLED", statusOf(t, srv, "cx-1"), name)
	}
	// The tenant is free for a new plan at once, and that plan runs.
	p := submitPlan(t, b, []string{tg.stageJSON("push", "ms=0")}, []string{"cx-1"}, "")
	var done wire.Plan
	cfHTTP(t, http.MethodGet, b.URL()+"/v1/plans/"+p.PlanID+"?wait=20s", "", &done)
	assert.Equal(t, "COMPLETED", done.Status, "the next plan of the tenant is not refused its lease")
}

// A pause sent to B while A runs a stage takes effect at the run's next stage boundary: the
// stage finishes, the next one is not called, and the task reads PAUSED; a resume through B
// runs the rest.
func TestPauseOnAnotherExecutorTakesEffectAtTheBoundary(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	a, b := twoExecutors(t)
	p := submitPlan(t, a, []string{tg.stageJSON("push", "ms=800"), tg.stageJSON("check", "ms=0")}, []string{"px-1"}, "")
	eventuallyRunning(t, tg, "px-1", "push")

	require.Equal(t, http.StatusOK, cfHTTP(t, http.MethodPost, b.URL()+"/v1/tenants/px-1/pause", "", nil))
	require.Eventually(t, func() bool { return statusOf(t, b, "px-1") == "PAUSED" }, 10*time.Second, 10*time.Millisecond)
	push := tg.callsOf("px-1", "push")
	require.Len(t, push, 1)
	assert.False(t, push[0].cancelled, "the stage ran to its end")
	time.Sleep(300 * time.Millisecond)
	assert.Empty(t, tg.callsOf("px-1", "check"), "the next stage is not called")
	assert.Equal(t, "PAUSED", statusOf(t, a, "px-1"))

	require.Equal(t, http.StatusOK, cfHTTP(t, http.MethodPost, b.URL()+"/v1/tenants/px-1/resume", "", nil))
	var done wire.Plan
	cfHTTP(t, http.MethodGet, a.URL()+"/v1/plans/"+p.PlanID+"?wait=20s", "", &done)
	assert.Equal(t, "COMPLETED", done.Status)
	assert.Len(t, tg.callsOf("px-1", "push"), 1, "no completed stage ran twice")
	assert.Len(t, tg.callsOf("px-1", "check"), 1)
}

// A plan paused through B stops A's starts and pauses A's runs at their boundary; cancelled
// through B, every task ends CANCELLED and no later stage is called.
func TestPlanPauseAndCancelOnAnotherExecutor(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	a, b := twoExecutors(t)
	tenants := []string{"pp-1", "pp-2", "pp-3", "pp-4"}
	p := submitPlan(t, a, []string{tg.stageJSON("push", "ms=800"), tg.stageJSON("check", "ms=0")}, tenants, `,"maxConcurrency":2`)
	eventuallyRunning(t, tg, "pp-1", "push")
	eventuallyRunning(t, tg, "pp-2", "push")

	require.Equal(t, http.StatusOK, cfHTTP(t, http.MethodPost, b.URL()+"/v1/plans/"+p.PlanID+"/pause", "", nil))
	for _, tenant := range tenants[:2] {
		require.Eventually(t, func() bool { return statusOf(t, b, tenant) == "PAUSED" }, 10*time.Second, 10*time.Millisecond, tenant)
	}
	time.Sleep(500 * time.Millisecond)
	for _, tenant := range tenants {
		assert.Empty(t, tg.callsOf(tenant, "check"), "%s: no stage after the pause", tenant)
	}
	for _, tenant := range tenants[2:] {
		assert.Empty(t, tg.callsOf(tenant, "push"), "%s: nothing starts while the plan is paused", tenant)
		assert.Equal(t, "PENDING", statusOf(t, a, tenant))
	}

	require.Equal(t, http.StatusOK, cfHTTP(t, http.MethodPost, b.URL()+"/v1/plans/"+p.PlanID+"/cancel", "", nil))
	var got wire.Plan
	cfHTTP(t, http.MethodGet, a.URL()+"/v1/plans/"+p.PlanID, "", &got)
	assert.Equal(t, "CANCELLED", got.Status)
	time.Sleep(300 * time.Millisecond)
	for _, tenant := range tenants {
		assert.Equal(t, "CANCELLED", statusOf(t, a, tenant), tenant)
		assert.Empty(t, tg.callsOf(tenant, "check"), tenant)
	}
}

// A plan cancelled through B while A's runs are in a long stage: their stages stop within
// 1 s, and the plan and its tasks end CANCELLED.
func TestPlanCancelOnAnotherExecutorStopsRunsMidStage(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	a, b := twoExecutors(t)
	tenants := []string{"pc-1", "pc-2", "pc-3"}
	p := submitPlan(t, a, []string{tg.stageJSON("bake", "ms=20000"), tg.stageJSON("check", "ms=0")}, tenants, `,"maxConcurrency":3`)
	for _, tenant := range tenants {
		eventuallyRunning(t, tg, tenant, "bake")
	}
	sent := time.Now()
	require.Equal(t, http.StatusOK, cfHTTP(t, http.MethodPost, b.URL()+"/v1/plans/"+p.PlanID+"/cancel", "", nil))
	for _, tenant := range tenants {
		require.Eventually(t, func() bool { return len(tg.callsOf(tenant, "bake")) == 1 }, 5*time.Second, 5*time.Millisecond, tenant)
		c := tg.callsOf(tenant, "bake")[0]
		assert.True(t, c.cancelled, tenant)
		assert.Less(t, c.end.Sub(sent), time.Second, "%s stopped within 1 s", tenant)
	}
	time.Sleep(300 * time.Millisecond)
	var got wire.Plan
	cfHTTP(t, http.MethodGet, a.URL()+"/v1/plans/"+p.PlanID, "", &got)
	assert.Equal(t, "CANCELLED", got.Status)
	for _, tenant := range tenants {
		assert.Equal(t, "CANCELLED", statusOf(t, b, tenant), tenant)
		assert.Empty(t, tg.callsOf(tenant, "check"), tenant)
	}
}

// Retries of 200 failed tenants sent through two executors at once: exactly one retry per
// tenant wins and the other gets a 409; every retried tenant completes, its stage called once
// by the new run.
func TestConcurrentRetriesThroughTwoExecutorsOneWins(t *testing.T) {
	t.Parallel()
	const n = 200
	tg := newTarget(t)
	a, b := twoExecutors(t)
	tenants := make([]string, n)
	for i := range tenants {
		tenants[i] = fmt.Sprintf("rt-%03d", i)
	}
	p := submitPlan(t, a, []string{tg.stageJSON("push", "ms=0&failRun=1")}, tenants, `,"maxConcurrency":50`)
	var failed wire.Plan
	cfHTTP(t, http.MethodGet, a.URL()+"/v1/plans/"+p.PlanID+"?wait=60s", "", &failed)
	require.Equal(t, "FAILED", failed.Status)

	codes := make([][2]int, n)
	var wg sync.WaitGroup
	for i, tenant := range tenants {
		for j, srv := range []*server.Server{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes[i][j], _ = cfTryHTTP(http.MethodPost, srv.URL()+"/v1/tenants/"+tenant+"/retry", `{"fromCheckpoint":true}`, nil)
			}()
		}
	}
	wg.Wait()
	for i, c := range codes {
		ok := 0
		for _, code := range c {
			switch code {
			case http.StatusOK:
				ok++
			case http.StatusConflict:
			default:
				t.Errorf("%s: retry answered %d", tenants[i], code)
			}
		}
		assert.Equal(t, 1, ok, "%s: exactly one retry wins (%v)", tenants[i], c)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		var pl wire.Plan
		cfHTTP(t, http.MethodGet, a.URL()+"/v1/plans/"+p.PlanID+"?wait=10s", "", &pl)
		if pl.Status == "COMPLETED" {
			break
		}
	}
	for _, tenant := range tenants {
		var tk wire.Task
		cfHTTP(t, http.MethodGet, b.URL()+"/v1/tenants/"+tenant+"/task", "", &tk)
		assert.Equal(t, "COMPLETED", tk.Status, tenant)
		assert.Equal(t, 2, tk.Attempt, "%s: one new run", tenant)
		runs := map[int]int{}
		for _, c := range tg.callsOf(tenant, "push") {
			runs[c.run]++
		}
		assert.Equal(t, map[int]int{1: 1, 2: 1}, runs, "%s: the stage was called once per run", tenant)
	}
}

// Redis frozen (SIGSTOP) longer than the lease TTL while A runs a long stage (the shared
// topology): A cannot prove it still holds the tenant, so its self-fencing lease stops the run
// at its deadline (the stage call hung up, nothing more written) instead of deploying on.
// After the thaw any reader finds the owner gone: INTERRUPTED, the plan PAUSED; the stage is
// called again only when an operator retries, and never while A's call was in flight.
func TestARedisStallPastTheLeaseStopsTheRunBeforeAnyoneElseRunsIt(t *testing.T) {
	t.Parallel()
	const ttl = time.Second
	tg := newTarget(t)
	rs := redistest.Start(t)
	cfg := server.Config{RedisURL: rs.URL(), LeaseTTL: ttl}
	a, b := servertest.With(t, cfg), servertest.With(t, cfg)
	time.Sleep(ttl) // both executors have beaten a few times: steady
	p := submitPlan(t, a, []string{tg.stageJSON("bake", "ms=6000"), tg.stageJSON("check", "ms=0")}, []string{"st-1"}, "")
	eventuallyRunning(t, tg, "st-1", "bake")

	rs.Freeze()
	time.Sleep(2*ttl + ttl/2)
	bake := tg.callsOf("st-1", "bake")
	require.Len(t, bake, 1)
	require.True(t, bake[0].cancelled, "A hung up its call at its lease deadline, while Redis was frozen")
	rs.Thaw()

	var tk wire.Task
	require.Eventually(t, func() bool {
		_, err := cfTryHTTP(http.MethodGet, b.URL()+"/v1/tenants/st-1/task", "", &tk)
		return err == nil && tk.Status == "INTERRUPTED"
	}, 30*time.Second, 50*time.Millisecond, "a reader finds the self-fenced run's owner gone")
	require.Eventually(t, func() bool {
		var pl wire.Plan
		_, err := cfTryHTTP(http.MethodGet, b.URL()+"/v1/plans/"+p.PlanID, "", &pl)
		return err == nil && pl.Status == "PAUSED"
	}, 90*time.Second, 50*time.Millisecond, "the plan pauses for the loss") // a deadline, not a speed: readers answer 503 while they make sure of Redis after the thaw, longer on a loaded machine
	assert.Len(t, tg.callsOf("st-1", "bake"), 1, "nothing ran the stage again without an operator")

	cfHTTP(t, http.MethodPost, b.URL()+"/v1/plans/"+p.PlanID+"/resume", "", nil)
	cfHTTP(t, http.MethodPost, b.URL()+"/v1/tenants/st-1/retry", `{"fromCheckpoint":true}`, &tk)
	var done wire.Plan
	cfHTTP(t, http.MethodGet, b.URL()+"/v1/plans/"+p.PlanID+"?wait=30s", "", &done)
	require.Equal(t, "COMPLETED", done.Status)
	bake = tg.callsOf("st-1", "bake")
	require.Len(t, bake, 2, "the operator's retry ran the stage again")
	assert.False(t, bake[1].start.Before(bake[0].end), "the retry's call began after A's call ended")
	assert.Len(t, tg.callsOf("st-1", "check"), 1)
}
