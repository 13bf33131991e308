package main_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/wire"
)

// recorder is a loopback deployment target: it answers GET /<tenant>/<stage> after ?ms=N
// milliseconds (or when the caller goes away; a call with ?hang=1 while hang is set waits
// for that) and records every call, how many calls are in
// flight at once (the peak), and per (tenant, stage) how many calls were answered (a call
// whose caller went away first was not: its stage did not complete).
type recorder struct {
	srv  *httptest.Server
	hang atomic.Bool

	mu       sync.Mutex
	current  int
	peak     int
	answered map[string]int // "<tenant>/<stage>"
	// keys holds, per "<tenant>/<stage>", the Idempotency-Keys of its answered calls: a stage
	// answered again under the key it was answered with (the retry of an in-doubt attempt) is
	// work a target honouring the key does once.
	keys     map[string]map[string]bool
	started  map[string]int
	tenantIn map[string]int // calls of each tenant in flight
	overlaps []string       // calls that started while another call of their tenant was in flight
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	rc := &recorder{answered: map[string]int{}, keys: map[string]map[string]bool{}, started: map[string]int{}, tenantIn: map[string]int{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *recorder) serve(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	key := strings.Trim(r.URL.Path, "/")
	tenant, _, _ := strings.Cut(key, "/")
	rc.mu.Lock()
	rc.current++
	rc.peak = max(rc.peak, rc.current)
	rc.started[key]++
	if rc.tenantIn[tenant] > 0 {
		rc.overlaps = append(rc.overlaps, key)
	}
	rc.tenantIn[tenant]++
	rc.mu.Unlock()
	ms, _ := strconv.Atoi(r.URL.Query().Get("ms"))
	if r.URL.Query().Get("hang") == "1" && rc.hang.Load() {
		ms = int(time.Hour / time.Millisecond)
	}
	timer := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer timer.Stop()
	answered := false
	select {
	case <-timer.C:
		answered = true
	case <-r.Context().Done():
	}
	rc.mu.Lock()
	rc.current--
	rc.tenantIn[tenant]--
	if answered {
		rc.answered[key]++
		if rc.keys[key] == nil {
			rc.keys[key] = map[string]bool{}
		}
		rc.keys[key][r.Header.Get("Idempotency-Key")] = true
	}
	rc.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"ok":true}`)
}

// stages returns http stages calling the recorder, each answered after ms.
func (rc *recorder) stages(ms int, names ...string) []wire.StageRequest {
	out := httpStages(rc.srv.URL, "60s", names...)
	for i := range out {
		out[i].Params["url"] = fmt.Sprintf("%s/{{.TenantID}}/%s?ms=%d", rc.srv.URL, names[i], ms)
	}
	return out
}

// twice lists the (tenant, stage) pairs answered under more than one Idempotency-Key: a
// completed stage run again as new work. (The retry of an in-doubt attempt sends the key that
// attempt sent: a target honouring it does the work once.)
func (rc *recorder) twice() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []string
	for k, keys := range rc.keys {
		if len(keys) > 1 {
			out = append(out, fmt.Sprintf("%s x%d", k, len(keys)))
		}
	}
	return out
}

// completions returns how many distinct pieces of work the stage key ("<tenant>/<stage>")
// completed: its answered calls' distinct Idempotency-Keys.
func (rc *recorder) completions(key string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.keys[key])
}

// overlapping lists the calls that started while another call of the same tenant was in
// flight: a tenant run twice at once.
func (rc *recorder) overlapping() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.overlaps...)
}

func (rc *recorder) peakInFlight() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.peak
}

// inFlight returns how many calls of stage are in flight.
func (rc *recorder) inFlight(stage string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for k, started := range rc.started {
		if strings.HasSuffix(k, "/"+stage) {
			n += started - rc.answered[k]
		}
	}
	return n
}

func (rc *recorder) answeredCount(key string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.answered[key]
}

func tenantsN(prefix string, n int) []wire.TenantRequest {
	out := make([]wire.TenantRequest, n)
	for i := range out {
		out[i] = wire.TenantRequest{ID: fmt.Sprintf("%s-%03d", prefix, i)}
	}
	return out
}

// tasksOf returns the plan's tasks (GET /v1/plans/{id}/tasks, every page).
func tasksOf(t *testing.T, p *executorProc, planID string) []wire.Task {
	t.Helper()
	var all []wire.Task
	for {
		resp, err := http.Get(fmt.Sprintf("%s/v1/plans/%s/tasks?limit=1000&offset=%d", p.URL(), planID, len(all)))
		require.NoError(t, err)
		var page wire.TaskList
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&page))
		resp.Body.Close()
		all = append(all, page.Tasks...)
		if len(page.Tasks) < 1000 {
			return all
		}
	}
}

// watchPlan waits for the plan to end (plan show --watch) and returns it.
func watchPlan(t *testing.T, p *executorProc, planID string) wire.Plan {
	t.Helper()
	r := p.cli(t, "plan", "show", planID, "--watch", "-o", "json")
	requireExit(t, 0, r)
	return decode[wire.Plan](t, r.stdout)
}

// A 300-tenant plan with maxConcurrency 10 submitted to one of three executors runs on all
// three (each may run 4 at once: no two executors can hold the plan's 10, so the third gets
// work however the first two chain theirs), never more than 10 of its calls at once (the three
// together could run 12), and no (tenant, stage) twice.
func TestOnePlanRunsOnThreeExecutorsWithinItsConcurrency(t *testing.T) {
	t.Parallel()
	rc := newRecorder(t)
	rs := redistest.Start(t)
	execs := []*executorProc{
		startExecutor(t, "A", rs.URL(), "--name", "exec-a", "--workers", "4"),
		startExecutor(t, "B", rs.URL(), "--name", "exec-b", "--workers", "4"),
		startExecutor(t, "C", rs.URL(), "--name", "exec-c", "--workers", "4"),
	}
	planFile := writePlan(t, wire.PlanRequest{
		Name: "three-executors", MaxConcurrency: 10, Stages: rc.stages(20, "s1", "s2"), Tenants: tenantsN("w", 300),
	})
	r := execs[0].cli(t, "submit", "-f", planFile, "-o", "json")
	requireExit(t, 0, r)
	submitted := decode[wire.Plan](t, r.stdout)

	end := watchPlan(t, execs[1], submitted.PlanID)
	assert.Equal(t, "COMPLETED", end.Status)
	byExecutor := map[string]int{}
	for _, tk := range tasksOf(t, execs[2], submitted.PlanID) {
		assert.Equal(t, "COMPLETED", tk.Status, tk.TenantID)
		byExecutor[tk.Executor]++
	}
	t.Logf("tasks by executor: %v; peak calls in flight %d", byExecutor, rc.peakInFlight())
	for _, name := range []string{"exec-a", "exec-b", "exec-c"} {
		assert.Positive(t, byExecutor[name], "%s ran some of the plan", name)
	}
	assert.LessOrEqual(t, rc.peakInFlight(), 10, "the plan's maxConcurrency holds across executors")
	assert.Empty(t, rc.twice(), "no (tenant, stage) is called twice")
	for _, tn := range tenantsN("w", 300) {
		for _, s := range []string{"s1", "s2"} {
			require.Equal(t, 1, rc.answeredCount(tn.ID+"/"+s), tn.ID+"/"+s)
		}
	}
}

// submitHangingAtS2 submits to p a plan of stages s1, s2, s3 (100 ms each) whose s2 hangs
// until rc.hang is cleared (the executor running it is killed meanwhile), and returns it.
func submitHangingAtS2(t *testing.T, rc *recorder, p *executorProc, name string, maxConcurrency int, tenants []wire.TenantRequest) wire.Plan {
	t.Helper()
	rc.hang.Store(true) // s2 hangs until the test clears it, then answers at once
	stages := rc.stages(100, "s1", "s2", "s3")
	stages[1].Params["url"] = stages[1].Params["url"].(string) + "&hang=1"
	planFile := writePlan(t, wire.PlanRequest{Name: name, MaxConcurrency: maxConcurrency, Stages: stages, Tenants: tenants})
	r := p.cli(t, "submit", "-f", planFile, "-o", "json")
	requireExit(t, 0, r)
	return decode[wire.Plan](t, r.stdout)
}

// kill -9 of the executor running a plan's tasks: its RUNNING tenants read INTERRUPTED within
// about a lease TTL, found by the surviving executor's reconciler without any read, the plan
// PAUSED with a reason naming the lost executor and its tenants; plan resume and plan retry
// --from-checkpoint on the survivor finish every tenant, no completed stage runs twice and
// nothing is left PENDING.
func TestKilledExecutorPausesItsPlanThenResumeAndRetryFinish(t *testing.T) {
	t.Parallel()
	rc := newRecorder(t)
	rs := redistest.Start(t)
	// A takes the plan's 4 slots (maxConcurrency 4) before B starts: B can claim nothing
	// while A lives, so every run A loses is one the survivor must find.
	a := startExecutor(t, "A", rs.URL(), "--name", "exec-a", "--workers", "4")
	submitted := submitHangingAtS2(t, rc, a, "kill-mid-plan", 4, tenantsN("k", 10))
	require.Eventually(t, func() bool { return rc.inFlight("s2") == 4 }, pollTimeout, 10*time.Millisecond, "A runs 4 tenants' s2")
	b := startExecutor(t, "B", rs.URL(), "--name", "exec-b")

	a.kill(t)
	killedAt := time.Now()
	rc.hang.Store(false)
	var paused wire.Plan
	require.Eventually(t, func() bool {
		r := b.cli(t, "plan", "show", submitted.PlanID, "-o", "json")
		if r.code != 0 {
			return false
		}
		paused = decode[wire.Plan](t, r.stdout)
		return paused.Status == "PAUSED"
	}, 30*time.Second, 100*time.Millisecond, "the plan is PAUSED after A's loss")
	t.Logf("plan PAUSED %s after the kill (lease TTL %s): %s", time.Since(killedAt).Round(time.Millisecond), leaseTTL, paused.Reason)
	assert.Contains(t, paused.Reason, "exec-a", "the reason names the lost executor")
	interrupted := 0
	for _, tk := range tasksOf(t, b, submitted.PlanID) {
		switch tk.Status {
		case "INTERRUPTED":
			interrupted++
			assert.Contains(t, paused.Reason, tk.TenantID, "the reason names the interrupted tenant")
			assert.Equal(t, 1, tk.CurrentStage, "%s resumes at s2", tk.TenantID)
		case "PENDING":
			assert.Zero(t, rc.answeredCount(tk.TenantID+"/s1"), "a PENDING tenant never started")
		default:
			assert.Failf(t, "unexpected status", "%s is %s", tk.TenantID, tk.Status)
		}
	}
	assert.Equal(t, 4, interrupted, "A's four runs are INTERRUPTED")
	time.Sleep(2 * leaseTTL)
	assert.Equal(t, 4, rc.answeredCount("k-000/s1")+rc.answeredCount("k-001/s1")+rc.answeredCount("k-002/s1")+rc.answeredCount("k-003/s1")+
		rc.answeredCount("k-004/s1")+rc.answeredCount("k-005/s1")+rc.answeredCount("k-006/s1")+rc.answeredCount("k-007/s1")+
		rc.answeredCount("k-008/s1")+rc.answeredCount("k-009/s1"), "nothing of a PAUSED plan starts until an SRE decides")

	// The SRE decides: the never-started tenants continue, the interrupted ones resume.
	requireExit(t, 0, b.cli(t, "plan", "resume", submitted.PlanID))
	requireExit(t, 0, b.cli(t, "plan", "retry", submitted.PlanID, "--from-checkpoint"))
	end := watchPlan(t, b, submitted.PlanID)
	assert.Equal(t, "COMPLETED", end.Status)
	for _, tk := range tasksOf(t, b, submitted.PlanID) {
		assert.Equal(t, "COMPLETED", tk.Status, tk.TenantID)
	}
	assert.Empty(t, rc.twice(), "no completed stage ran twice")
}

// SIGTERM of one of two executors mid-plan: its runs stop at their next stage boundary and
// are handed back; the plan completes on the other executor without any operator action, and
// no completed stage runs twice.
func TestSIGTERMOfOneExecutorTheOtherFinishesThePlan(t *testing.T) {
	t.Parallel()
	rc := newRecorder(t)
	rs := redistest.Start(t)
	a := startExecutor(t, "A", rs.URL(), "--name", "exec-a", "--workers", "4", "--shutdown-timeout", "30s")
	b := startExecutor(t, "B", rs.URL(), "--name", "exec-b", "--workers", "4")
	planFile := writePlan(t, wire.PlanRequest{
		Name: "rolling-restart", MaxConcurrency: 8, Stages: rc.stages(150, "s1", "s2", "s3"), Tenants: tenantsN("r", 40),
	})
	r := a.cli(t, "submit", "-f", planFile, "-o", "json")
	requireExit(t, 0, r)
	submitted := decode[wire.Plan](t, r.stdout)
	require.Eventually(t, func() bool {
		var done int
		for _, tn := range tenantsN("r", 40) {
			done += rc.answeredCount(tn.ID + "/s3")
		}
		return done >= 8
	}, pollTimeout, 10*time.Millisecond, "the rollout is under way")

	require.NoError(t, a.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-a.exited:
	case <-time.After(30 * time.Second):
		require.FailNow(t, "A did not exit after SIGTERM")
	}
	require.NoError(t, a.err, "a graceful shutdown exits 0")

	end := watchPlan(t, b, submitted.PlanID)
	assert.Equal(t, "COMPLETED", end.Status, "no operator action was needed")
	byExecutor := map[string]int{}
	for _, tk := range tasksOf(t, b, submitted.PlanID) {
		assert.Equal(t, "COMPLETED", tk.Status, tk.TenantID)
		assert.Equal(t, 1, tk.Attempt, "%s: a hand-back is not a retry", tk.TenantID)
		byExecutor[tk.Executor]++
	}
	t.Logf("tasks by the executor that ended them: %v", byExecutor)
	assert.Positive(t, byExecutor["exec-b"])
	assert.Empty(t, rc.twice(), "no completed stage ran twice")
	for _, tn := range tenantsN("r", 40) {
		for _, s := range []string{"s1", "s2", "s3"} {
			assert.Equal(t, 1, rc.answeredCount(tn.ID+"/"+s), tn.ID+"/"+s)
		}
	}
}
