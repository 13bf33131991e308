package main_test

// Acceptance tests of the Redis store with real, separate `executor serve` processes sharing
// one private redis-server per test: a restarted executor answers from Redis, a killed
// executor's task is found INTERRUPTED once its lease expired and resumes from its checkpoint,
// and two executors never run one tenant at once.

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/wire"
)

// Limits of the bounded polls.
const (
	pollTimeout  = 20 * time.Second
	pollInterval = 100 * time.Millisecond
)

// pollTenant reads `status --tenant` from p until done accepts the task, and returns it.
// check, if set, sees every successful read (to assert on intermediate states).
func pollTenant(t *testing.T, p *executorProc, tenant string, what string, check func(wire.Task), done func(wire.Task) bool) wire.Task {
	t.Helper()
	var last wire.Task
	var lastResult result
	require.Eventually(t, func() bool {
		lastResult = p.cli(t, "status", "--tenant", tenant, "-o", "json")
		if lastResult.code != 0 {
			return false
		}
		last = decode[wire.Task](t, lastResult.stdout)
		if check != nil {
			check(last)
		}
		return done(last)
	}, pollTimeout, pollInterval, "%s: tenant %s never %s; last read:\n%s", p.name, tenant, what, lastResult)
	return last
}

// 1. A plan fails on executor A; A is killed; executor B, which never saw the plan, answers
// every query from Redis, retries the tenant from its checkpoint and completes it without
// re-running the stages that had completed.
func TestRestartQueryRetryFromRedis(t *testing.T) {
	t.Parallel()
	tg, targetSrv := newTarget(t)
	rs := redistest.Start(t)

	planFile := writePlan(t, wire.PlanRequest{
		Name:    "redis-restart",
		Stages:  httpStages(targetSrv.URL, "5s", "s1", "s2", "s3", "s4"),
		Tenants: []wire.TenantRequest{{ID: "t1"}, {ID: "t2"}, {ID: "t3"}},
	})

	a := startExecutor(t, "A", rs.URL())
	r := a.cli(t, "submit", "-f", planFile, "--wait", "-o", "json")
	requireExit(t, 1, r)
	submitted := decode[wire.Plan](t, r.stdout)
	require.Equal(t, "FAILED", submitted.Status, r.stdout)
	assert.Equal(t, 2, submitted.Progress["COMPLETED"])
	assert.Equal(t, 1, submitted.Progress["FAILED"])
	a.kill(t)

	b := startExecutor(t, "B", rs.URL())

	// B reads the tenant's task, its checkpoint and the plan from Redis.
	r = b.cli(t, "status", "--tenant", "t2", "-o", "json")
	requireExit(t, 0, r)
	task := decode[wire.Task](t, r.stdout)
	assert.Equal(t, "FAILED", task.Status)
	assert.Equal(t, submitted.PlanID, task.PlanID)
	assert.Equal(t, 1, task.Attempt)
	require.NotNil(t, task.LastError, r.stdout)
	assert.Equal(t, "permanent", task.LastError.Class)
	assert.Equal(t, "s3", task.LastError.Stage)
	assert.Equal(t, http.StatusBadRequest, task.LastError.Code)
	require.NotNil(t, task.Checkpoint, r.stdout)
	assert.Equal(t, 1, task.Checkpoint.LastCompletedStageIndex)

	r = b.cli(t, "checkpoint", "--tenant", "t2", "-o", "json")
	requireExit(t, 0, r)
	cp := decode[wire.Checkpoint](t, r.stdout)
	assert.Equal(t, []string{"s1", "s2"}, cp.CompletedStages)
	assert.Equal(t, task.TaskID, cp.TaskID)

	r = b.cli(t, "plan", "show", submitted.PlanID, "-o", "json")
	requireExit(t, 0, r)
	shown := decode[wire.Plan](t, r.stdout)
	assert.Equal(t, "FAILED", shown.Status)
	assert.Equal(t, submitted.TaskIDs, shown.TaskIDs)

	// Fix the target and retry on B from the checkpoint.
	tg.fixed.Store(true)
	r = b.cli(t, "retry", "--tenant", "t2", "--from-checkpoint", "-o", "json")
	requireExit(t, 0, r)
	assert.Equal(t, task.TaskID, decode[wire.Task](t, r.stdout).TaskID)

	final := pollTenant(t, b, "t2", "COMPLETED", nil, func(tk wire.Task) bool { return tk.Status == "COMPLETED" })
	assert.Equal(t, 2, final.Attempt)
	require.NotNil(t, final.Checkpoint)
	assert.Equal(t, []string{"s1", "s2", "s3", "s4"}, final.Checkpoint.CompletedStages)

	r = b.cli(t, "plan", "show", submitted.PlanID, "--watch", "-o", "json")
	requireExit(t, 0, r)
	reopened := decode[wire.Plan](t, r.stdout)
	assert.Equal(t, "COMPLETED", reopened.Status)
	assert.Equal(t, 3, reopened.Progress["COMPLETED"])

	// The completed stages did not run again.
	assertT2ResumedAtS3(t, tg)
}

// hangTarget answers 200 to every request but the first to k1's s2, which it holds until the
// request's connection drops (or the test ends).
type hangTarget struct {
	mu        sync.Mutex
	hits      map[string]int
	firstS2   chan struct{} // closed when the first s2 request arrived
	firstDone chan struct{} // closed when the first s2 request's context ended
	testDone  chan struct{}
}

func (h *hangTarget) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Read the body to its end: only then does the server watch the connection and cancel
	// the request's context when it drops.
	_, _ = io.Copy(io.Discard, r.Body)
	key := strings.Trim(r.URL.Path, "/")
	h.mu.Lock()
	h.hits[key]++
	n := h.hits[key]
	h.mu.Unlock()
	if key == "k1/s2" && n == 1 {
		close(h.firstS2)
		select {
		case <-r.Context().Done():
			close(h.firstDone)
		case <-h.testDone:
		}
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"ok":true}`)
}

func (h *hangTarget) count(key string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits[key]
}

// 2. Executor A is killed in the middle of a stage. Executor B reports the task RUNNING at
// most until the lease TTL has passed, then INTERRUPTED (lease_lost) when it is read, with no
// other operator action, its plan PAUSED for A's loss; plan resume and a retry from the
// checkpoint run the interrupted stage again and complete.
func TestKilledMidStageIsInterruptedThenResumed(t *testing.T) {
	t.Parallel()
	tg := &hangTarget{
		hits: map[string]int{}, firstS2: make(chan struct{}), firstDone: make(chan struct{}),
		testDone: make(chan struct{}),
	}
	targetSrv := httptest.NewServer(tg)
	t.Cleanup(targetSrv.Close)
	t.Cleanup(func() { close(tg.testDone) }) // runs before targetSrv.Close
	rs := redistest.Start(t)

	stages := httpStages(targetSrv.URL, "5s", "s1", "s2", "s3")
	stages[1].Timeout = "60s" // the first s2 call must outlive A
	planFile := writePlan(t, wire.PlanRequest{
		Name: "redis-kill-mid-stage", Stages: stages, Tenants: []wire.TenantRequest{{ID: "k1"}},
	})

	a := startExecutor(t, "A", rs.URL())
	r := a.cli(t, "submit", "-f", planFile, "-o", "json")
	requireExit(t, 0, r)
	submitted := decode[wire.Plan](t, r.stdout)

	select {
	case <-tg.firstS2:
	case <-time.After(pollTimeout):
		require.FailNow(t, "the target never received k1's first s2 call")
	}
	running := pollTenant(t, a, "k1", "RUNNING at s2", nil, func(tk wire.Task) bool {
		return tk.Status == "RUNNING" && tk.CurrentStageName == "s2"
	})
	require.NotNil(t, running.Checkpoint)
	assert.Equal(t, []string{"s1"}, running.Checkpoint.CompletedStages)

	a.kill(t)
	killedAt := time.Now()
	select {
	case <-tg.firstDone:
	case <-time.After(pollTimeout):
		require.FailNow(t, "the first s2 call's connection did not drop when A died")
	}

	b := startExecutor(t, "B", rs.URL())
	var seen []string
	interrupted := pollTenant(t, b, "k1", "INTERRUPTED",
		func(tk wire.Task) {
			if len(seen) == 0 || seen[len(seen)-1] != tk.Status {
				seen = append(seen, tk.Status)
			}
		},
		func(tk wire.Task) bool { return tk.Status == "INTERRUPTED" })
	t.Logf("B read k1 as %v; INTERRUPTED %s after the kill", seen, time.Since(killedAt).Round(time.Millisecond))
	for _, s := range seen {
		assert.Contains(t, []string{"RUNNING", "INTERRUPTED"}, s, "statuses read on B: %v", seen)
	}
	assert.GreaterOrEqual(t, time.Since(killedAt), leaseTTL/2,
		"INTERRUPTED before the dead owner's lease can have expired")
	require.NotNil(t, interrupted.LastError)
	assert.Equal(t, "lease_lost", interrupted.LastError.Class)
	assert.Equal(t, "s2", interrupted.LastError.Stage)
	assert.Equal(t, 1, interrupted.Attempt)
	assert.Equal(t, 1, interrupted.CurrentStage, "the interrupted task resumes at s2")
	require.NotNil(t, interrupted.Checkpoint)
	assert.Equal(t, []string{"s1"}, interrupted.Checkpoint.CompletedStages)

	// The interrupted state was persisted, not just reported: another read agrees.
	r = b.cli(t, "task", "show", interrupted.TaskID, "-o", "json")
	requireExit(t, 0, r)
	assert.Equal(t, "INTERRUPTED", decode[wire.Task](t, r.stdout).Status)

	resumeAfterLoss(t, b, submitted.PlanID) // A's loss paused the plan
	r = b.cli(t, "retry", "--tenant", "k1", "--from-checkpoint", "-o", "json")
	requireExit(t, 0, r)
	final := pollTenant(t, b, "k1", "COMPLETED", nil, func(tk wire.Task) bool { return tk.Status == "COMPLETED" })
	assert.Equal(t, 2, final.Attempt)

	r = b.cli(t, "checkpoint", "--tenant", "k1", "-o", "json")
	requireExit(t, 0, r)
	assert.Equal(t, []string{"s1", "s2", "s3"}, decode[wire.Checkpoint](t, r.stdout).CompletedStages)

	r = b.cli(t, "plan", "show", submitted.PlanID, "--watch", "-o", "json")
	requireExit(t, 0, r)
	assert.Equal(t, "COMPLETED", decode[wire.Plan](t, r.stdout).Status)

	assert.Equal(t, 1, tg.count("k1/s1"))
	assert.Equal(t, 2, tg.count("k1/s2"), "the killed s2 call and the resumed one")
	assert.Equal(t, 1, tg.count("k1/s3"))
}

// inflight counts one tenant's concurrent requests.
type inflight struct{ current, peak, total atomic.Int32 }

// holdTarget holds every request 300 ms and tracks, per tenant, how many are in flight.
type holdTarget struct {
	mu      sync.Mutex
	tenants map[string]*inflight
}

func (h *holdTarget) of(tenant string) *inflight {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.tenants[tenant]
	if f == nil {
		f = &inflight{}
		h.tenants[tenant] = f
	}
	return f
}

func (h *holdTarget) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	tenant, _, _ := strings.Cut(strings.Trim(r.URL.Path, "/"), "/")
	f := h.of(tenant)
	f.total.Add(1)
	n := f.current.Add(1)
	for {
		p := f.peak.Load()
		if n <= p || f.peak.CompareAndSwap(p, n) {
			break
		}
	}
	select {
	case <-time.After(300 * time.Millisecond):
	case <-r.Context().Done():
	}
	f.current.Add(-1)
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"ok":true}`)
}

// 3. The same plan for one tenant is submitted to two executors at the same moment: one run
// completes, the other is refused (409) or fails with tenant_locked, and the target never
// sees two requests for the tenant at once.
func TestTwoExecutorsNeverRunOneTenantTwice(t *testing.T) {
	t.Parallel()
	tg := &holdTarget{tenants: map[string]*inflight{}}
	targetSrv := httptest.NewServer(tg)
	t.Cleanup(targetSrv.Close)
	rs := redistest.Start(t)
	procs := []*executorProc{startExecutor(t, "A", rs.URL()), startExecutor(t, "B", rs.URL())}

	outcomes := map[string]int{}
	for round := 1; round <= 5; round++ {
		tenant := fmt.Sprintf("shared-%d", round)
		planFile := writePlan(t, wire.PlanRequest{
			Name:    "redis-race-" + tenant,
			Stages:  httpStages(targetSrv.URL, "5s", "s1", "s2"),
			Tenants: []wire.TenantRequest{{ID: tenant}},
		})

		results := make([]result, len(procs))
		errs := make([]error, len(procs))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, p := range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[i], errs[i] = runCLI(p.URL(), "submit", "-f", planFile, "--wait", "-o", "json")
			}()
		}
		close(start)
		wg.Wait()

		completed := 0
		var kinds []string
		for i, p := range procs {
			require.NoError(t, errs[i], "round %d, %s", round, p.name)
			kind := classifySubmission(t, p, tenant, results[i])
			kinds = append(kinds, p.name+":"+kind)
			outcomes[kind]++
			if kind == "completed" {
				completed++
			}
		}
		f := tg.of(tenant)
		t.Logf("round %d (%s): %v; target saw %d requests, peak %d in flight", round, tenant, kinds, f.total.Load(), f.peak.Load())
		assert.LessOrEqual(t, f.peak.Load(), int32(1), "round %d: concurrent requests for %s", round, tenant)
		assert.Equal(t, 1, completed, "round %d: want exactly one COMPLETED plan, got %v\nA: %s\nB: %s",
			round, kinds, results[0], results[1])
		assert.Equal(t, int32(2), f.total.Load(), "round %d: one run's two stages", round)
		assert.Zero(t, f.current.Load())
	}
	t.Logf("outcomes over 5 rounds: %v", outcomes)
}

// classifySubmission returns "completed", "conflict" (409) or "tenant_locked" for one
// `submit --wait -o json` result, failing the test on any other outcome.
func classifySubmission(t *testing.T, p *executorProc, tenant string, r result) string {
	t.Helper()
	switch r.code {
	case 0:
		pl := decode[wire.Plan](t, r.stdout)
		require.Equal(t, "COMPLETED", pl.Status, "%s: exit 0 with plan %s", p.name, r.stdout)
		return "completed"
	case 1:
		if strings.TrimSpace(r.stdout) == "" {
			if strings.Contains(r.stderr, "404") && strings.Contains(r.stderr, "plan not found") {
				require.FailNowf(t, "submission refused with 404 plan not found",
					"%s: %s\nA known race: app.Submit on the other executor writes the tasks and the "+
						"tenant index before the plan hash; a conflict check reading in between cannot "+
						"load the task's plan.", p.name, r)
			}
			require.Contains(t, r.stderr, "409", "%s: exit 1 without a plan and not a 409\n%s", p.name, r)
			assert.Contains(t, r.stderr, tenant, "%s: the 409 names the tenant", p.name)
			return "conflict"
		}
		pl := decode[wire.Plan](t, r.stdout)
		require.Equal(t, "FAILED", pl.Status, "%s: exit 1 with plan %s", p.name, r.stdout)
		tr := p.cli(t, "plan", "tasks", pl.PlanID, "-o", "json")
		requireExit(t, 0, tr)
		tasks := decode[wire.TaskList](t, tr.stdout).Tasks
		require.Len(t, tasks, 1, tr.stdout)
		tk := tasks[0]
		assert.Equal(t, tenant, tk.TenantID)
		assert.Equal(t, "FAILED", tk.Status)
		require.NotNil(t, tk.LastError, tr.stdout)
		require.Equal(t, "tenant_locked", tk.LastError.Class, "%s: the losing run's error", p.name)
		if tk.Checkpoint != nil {
			assert.Empty(t, tk.Checkpoint.CompletedStages, "%s: the losing run completed no stage", p.name)
		}
		return "tenant_locked"
	default:
		require.FailNowf(t, "unexpected exit status", "%s: %s", p.name, r)
		return ""
	}
}
