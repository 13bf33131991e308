package main_test

// The acceptance tests of rollback (issue 35), with real processes: the built executor
// (serve, and the CLI), a private redis-server per test, and a recording deployment target in
// the test process. A stage's undo is an http call the target tells apart (path undo-<stage>),
// carrying the output of the forward stage it undoes, so the target sees what was undone, in
// which order, with which value, under which Idempotency-Key and fence.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/wire"
)

// undoPrefix begins the path of an undo's call on the rbTarget: /<tenant>/undo-<stage>.
const undoPrefix = "undo-"

// rbTarget is a recording deployment target for rollbacks. POST /<tenant>/<stage>?run=R
// answers 200 with {"previous":"v-<tenant>-<stage>"} (the forward stage's output, which its
// undo reads back), except for the (tenant, stage) pairs of failAt, answered 500 once failGate
// (if any) is closed; POST /<tenant>/undo-<stage>?run=R answers 200 {"ok":true}. A call with
// &hold=1 is held until release, or until its caller hangs up. Every call is recorded with when
// it started and ended (answered, or hung up by the caller).
type rbTarget struct {
	srv      *httptest.Server
	failAt   map[string]string // tenant → the stage answered 500
	failGate chan struct{}     // nil: failures answer at once
	holdAt   map[string]string // tenant → a stage held until release, as with &hold=1 (set before the plan)
	held     chan struct{}     // closed by release
	release  func()
	callBook
}

func newRBTarget(t *testing.T, failAt map[string]string, failGate chan struct{}) *rbTarget {
	t.Helper()
	rt := &rbTarget{failAt: failAt, failGate: failGate, held: make(chan struct{})}
	rt.release = sync.OnceFunc(func() { close(rt.held) })
	rt.srv = httptest.NewServer(http.HandlerFunc(rt.serve))
	t.Cleanup(rt.srv.Close)
	t.Cleanup(rt.release) // runs before the server closes: no handler is left holding
	return rt
}

func (rt *rbTarget) serve(w http.ResponseWriter, r *http.Request) {
	// Read the body to its end: only then does the server watch the connection and end the
	// request's context when the caller hangs up.
	body, _ := io.ReadAll(r.Body)
	var fields struct {
		Previous string `json:"previous"`
	}
	_ = json.Unmarshal(body, &fields)
	tenant, stageName, _ := strings.Cut(strings.Trim(r.URL.Path, "/"), "/")
	q := r.URL.Query()
	run, _ := strconv.Atoi(q.Get("run"))
	id := rt.begin(targetCall{Previous: fields.Previous,
		Tenant: tenant, Stage: stageName, Run: run, Key: r.Header.Get("Idempotency-Key"),
		Fence: r.Header.Get("Executor-Fence"), Start: time.Now(),
	})

	wait := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		case <-r.Context().Done():
			rt.end(id, 0, false)
			return false
		}
	}
	if (q.Get("hold") == "1" || rt.holdAt[tenant] == stageName) && !wait(rt.held) {
		return
	}
	status, answer := http.StatusOK, fmt.Sprintf(`{"previous":"v-%s-%s"}`, tenant, stageName)
	switch {
	case rt.failAt[tenant] == stageName:
		if rt.failGate != nil && !wait(rt.failGate) {
			return
		}
		status, answer = http.StatusInternalServerError, `{"error":"the deploy broke"}`
	case strings.HasPrefix(stageName, undoPrefix):
		answer = `{"ok":true}`
	}
	rt.answer(w, r, id, status, answer)
}

// of returns the calls of tenant, in arrival order.
func (rt *rbTarget) of(tenant string) []targetCall {
	var out []targetCall
	for _, c := range rt.all() {
		if c.Tenant == tenant {
			out = append(out, c)
		}
	}
	return out
}

// callPath returns the stages tenant's calls named, in arrival order ("s1", "undo-s2", ...).
func callPath(calls []targetCall) []string {
	out := []string{}
	for _, c := range calls {
		out = append(out, c.Stage)
	}
	return out
}

// stages returns http stages calling the target (POST /<tenant>/<name>?run=<run>, one attempt
// each: a 500 fails the stage at once), each with an http undo calling /<tenant>/undo-<name>
// whose body carries the stage's output read back from the task's checkpoint:
// {"previous":"{{index .Outputs "<name>" "previous"}}"}. undoURLSuffix, when it names a stage,
// is appended to its undo's URL (a template).
func (rt *rbTarget) stages(names []string, undoURLSuffix map[string]string) []wire.StageRequest {
	out := make([]wire.StageRequest, len(names))
	for i, name := range names {
		out[i] = wire.StageRequest{
			Name: name, Kind: "http", Timeout: "60s", Retry: &wire.RetryRequest{MaxAttempts: 1},
			Params: map[string]any{
				"method": "POST", "url": rt.srv.URL + "/{{.TenantID}}/" + name + "?run={{.Attempt}}",
				"body": `{"tenant":"{{.TenantID}}"}`,
			},
			Undo: &wire.StageRequest{
				Kind: "http", Timeout: "60s",
				Params: map[string]any{
					"method": "POST", "url": rt.srv.URL + "/{{.TenantID}}/" + undoPrefix + name + "?run={{.Attempt}}" + undoURLSuffix[name],
					"body": fmt.Sprintf(`{"previous":"{{index .Outputs %q "previous"}}"}`, name),
				},
			},
		}
	}
	return out
}

// tenantTask reads GET /v1/tenants/{tenant}/task from p (the tenant's latest task, with its
// ledger and its lease).
func tenantTask(t *testing.T, p *executorProc, tenant string) wire.Task {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(p.URL() + "/v1/tenants/" + tenant + "/task")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var tk wire.Task
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&tk))
	return tk
}

// undoAttempts returns the undo attempts of a task's ledger.
func undoAttempts(tk wire.Task) []wire.Attempt {
	var out []wire.Attempt
	for _, a := range tk.Attempts {
		if a.Undo {
			out = append(out, a)
		}
	}
	return out
}

// attemptsLine describes a ledger for a failure message.
func attemptsLine(as []wire.Attempt) string {
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = fmt.Sprintf("%s run %d #%d undo=%t %s", a.Stage, a.Run, a.Attempt, a.Undo, a.Outcome)
	}
	return strings.Join(parts, "; ")
}

// A 20-tenant plan with onFailure rollback and four http stages, each with an http undo; the
// target fails three chosen tenants at s3. Proves: exactly those three turn back and run the
// undo of s2, then of s1 (newest first; s3, which did not complete, and s4, which never ran,
// are not undone), each undo call carrying the output its forward stage answered (read from
// the checkpoint) under the undo's own Idempotency-Key (<plan>/<task>/undo:<stage>/<run>); they
// end ROLLED_BACK with the undo attempts in their ledger; the 17 others complete with every
// stage called once and no undo; the plan ends FAILED.
func TestOnFailureRollbackUndoesTheFailedTenantsNewestFirst(t *testing.T) {
	t.Parallel()
	tenants := tenantsN("ob", 20)
	failing := map[string]string{"ob-003": "s3", "ob-011": "s3", "ob-017": "s3"}
	rt := newRBTarget(t, failing, nil)
	rs := redistest.Start(t)
	a := startExecutor(t, "A", rs.URL(), "--name", "exec-a")

	p := submitPlan(t, a, wire.PlanRequest{
		Name: "rollback-on-failure", MaxConcurrency: 20, OnFailure: "rollback",
		Stages: rt.stages([]string{"s1", "s2", "s3", "s4"}, nil), Tenants: tenants,
	})
	require.Equal(t, "rollback", p.OnFailure)
	for _, s := range p.Stages {
		require.Equal(t, "http", s.Undo, "stage %s has an http undo", s.Name)
	}

	ended := watchEnded(t, a, p.PlanID, 1)
	assert.Equal(t, "FAILED", ended.Status, "a plan with rolled back tenants did not deploy them: FAILED")
	assert.Equal(t, 17, ended.Progress["COMPLETED"])
	assert.Equal(t, 3, ended.Progress["ROLLED_BACK"])

	tasks := tasksOf(t, a, p.PlanID)
	require.Len(t, tasks, 20)
	for _, listed := range tasks {
		tn := listed.TenantID
		calls := rt.of(tn)
		if failing[tn] == "" {
			assert.Equal(t, "COMPLETED", listed.Status, tn)
			assert.Equal(t, []string{"s1", "s2", "s3", "s4"}, callPath(calls), "%s: each stage once, no undo", tn)
			continue
		}

		// The failed tenant: forward to its failure at s3, then the undos newest first.
		require.Equal(t, []string{"s1", "s2", "s3", "undo-s2", "undo-s1"}, callPath(calls), tn)
		assert.Equal(t, http.StatusInternalServerError, calls[2].Status, "%s: s3 failed", tn)
		for i, c := range calls {
			run := 1
			if i >= 3 {
				run = 2 // the rollback is a new run
			}
			assert.Equal(t, run, c.Run, "%s: run of %s", tn, c.Stage)
		}
		for _, c := range calls[3:] {
			undone := strings.TrimPrefix(c.Stage, undoPrefix)
			assert.Equal(t, fmt.Sprintf("v-%s-%s", tn, undone), c.Previous, "%s: %s received %s's output", tn, c.Stage, undone)
			assert.Equal(t, fmt.Sprintf("%s/%s/undo:%s/2", p.PlanID, listed.TaskID, undone), c.Key, "%s: %s's Idempotency-Key", tn, c.Stage)
			assert.True(t, c.Completed, "%s: %s answered", tn, c.Stage)
		}

		tk := tenantTask(t, a, tn)
		assert.Equal(t, "ROLLED_BACK", tk.Status, tn)
		assert.True(t, tk.RollingBack, tn)
		assert.Equal(t, 2, tk.Attempt, "%s: the forward run, then the rollback", tn)
		assert.Zero(t, tk.CurrentStage, "%s: no stage left applied", tn)
		if assert.NotNil(t, tk.LastError, tn) {
			assert.Equal(t, "s3", tk.LastError.Stage, "%s: the failure rolled back for", tn)
		}
		undos := undoAttempts(tk)
		if assert.Len(t, undos, 2, "%s ledger: %s", tn, attemptsLine(tk.Attempts)) {
			for i, stageName := range []string{"s2", "s1"} {
				assert.Equal(t, stageName, undos[i].Stage, tn)
				assert.Equal(t, 2, undos[i].Run, tn)
				assert.Equal(t, "succeeded", undos[i].Outcome, tn)
			}
		}
		for _, at := range tk.Attempts {
			if !at.Undo {
				assert.Equal(t, 1, at.Run, "%s: forward attempts are run 1's", tn)
			}
		}
	}
	assert.Empty(t, overlaps(rt.all()), "no tenant called twice at once")
	assert.Empty(t, fenceFaults(rt.all()))
}

// rbTenants returns the tenant ids of ts.
func rbTenants(ts []wire.TenantRequest) []string {
	out := make([]string, len(ts))
	for i, tn := range ts {
		out[i] = tn.ID
	}
	return out
}

// A plan rolling out in three rings (2, 5 and 5 tenants, a failure budget of 20 % per ring;
// rings numbered from 0, as the API does): two of ring 1's five tenants fail at s2 (the target holds their failures until the three
// others completed), over the budget: the plan halts. POST /v1/plans/{id}/reject?rollback=true
// then proves: every tenant of the halted ring that ran is rolled back (the three COMPLETED
// ones undo s2 then s1, the two FAILED ones s1, the only stage they completed), each undo
// receiving its stage's output; ring 2's tenants never start (the target never saw them) and are
// CANCELLED; ring 0's stay COMPLETED, never undone; the plan ends FAILED.
func TestRejectRollbackOfAHaltedRing(t *testing.T) {
	t.Parallel()
	tenants := tenantsN("rr", 12)
	ids := rbTenants(tenants)
	ring0, ring1, ring2 := ids[:2], ids[2:7], ids[7:] // rings 0, 1 and 2
	failing := map[string]string{"rr-005": "s2", "rr-006": "s2"}
	gate := make(chan struct{})
	rt := newRBTarget(t, failing, gate)
	// rr-004 is still deploying s2 when the ring is rejected: it rolls back all the same (its
	// own run turns back as s2 completes).
	rt.holdAt = map[string]string{"rr-004": "s2"}
	closeGate := sync.OnceFunc(func() { close(gate) })
	t.Cleanup(closeGate)
	rs := redistest.Start(t)
	a := startExecutor(t, "A", rs.URL(), "--name", "exec-a")

	p := submitPlan(t, a, wire.PlanRequest{
		Name: "reject-rollback", MaxConcurrency: 10, FailureBudget: "20%",
		Stages: rt.stages([]string{"s1", "s2"}, nil), Tenants: tenants,
		Waves: []wire.WaveRequest{
			{Name: "first", Size: 2},
			{Name: "second", Size: 5},
			{Name: "rest", Size: "rest"},
		},
	})
	require.NotNil(t, p.Rings)

	// The failures answer once two others of ring 1 completed s2 (and both failing calls, and
	// rr-004's held one, are in flight): every tenant of the ring ran before the halt.
	require.Eventually(t, func() bool {
		done, inFlight := 0, 0
		for _, c := range rt.all() {
			switch {
			case c.Stage == "s2" && c.Completed && failing[c.Tenant] == "" && slices.Contains(ring1, c.Tenant):
				done++
			case c.Stage == "s2" && (failing[c.Tenant] != "" || c.Tenant == "rr-004") && c.End.IsZero():
				inFlight++
			}
		}
		return done == 2 && inFlight == 3
	}, pollTimeout, 20*time.Millisecond, "ring 1 runs: two tenants complete s2, three are at s2")
	closeGate()

	var halted wire.Plan
	require.Eventually(t, func() bool {
		got, ok := getPlan(t, a, p.PlanID)
		halted = got
		return ok && got.Rings.Halted != nil
	}, pollTimeout, 20*time.Millisecond, "two failures of five cross the 20% budget: the plan halts")
	assert.Equal(t, 1, halted.Rings.Halted.Ring)
	assert.Equal(t, "RUNNING", halted.Status, "a halted plan stays RUNNING")
	// The failed tasks end: ring 1 stands at two COMPLETED, two FAILED, rr-004 RUNNING.
	require.Eventually(t, func() bool {
		for _, tk := range tasksOf(t, a, p.PlanID) {
			want := "COMPLETED"
			switch {
			case failing[tk.TenantID] != "":
				want = "FAILED"
			case tk.TenantID == "rr-004":
				want = "RUNNING"
			}
			if slices.Contains(ring1, tk.TenantID) && tk.Status != want {
				return false
			}
		}
		return true
	}, pollTimeout, 50*time.Millisecond, "ring 1's tasks settle but rr-004's")

	resp, err := (&http.Client{Timeout: 30 * time.Second}).Post(a.URL()+"/v1/plans/"+p.PlanID+"/reject?rollback=true", "application/json", nil)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "reject?rollback=true: %s", body)
	rejected := decode[wire.Plan](t, string(body))
	assert.Equal(t, p.PlanID, rejected.PlanID)
	if assert.NotNil(t, rejected.Rings) && assert.Len(t, rejected.Rings.Waves, 3) {
		assert.Equal(t, "passed", rejected.Rings.Waves[0].State)
		assert.Equal(t, "rejected", rejected.Rings.Waves[1].State)
		assert.Equal(t, 1, rejected.Rings.Current, "the rollout stops at the rejected ring")
	}

	held := tenantTask(t, a, "rr-004")
	assert.Equal(t, "RUNNING", held.Status, "its run holds the tenant: no second run starts")
	assert.True(t, held.RollbackRequested, "asked to roll back")
	rt.release() // rr-004's s2 completes: its run turns back

	ended := watchEnded(t, a, p.PlanID, 1)
	assert.Equal(t, "FAILED", ended.Status, "its tenants rolled back, the plan did not deploy them")

	for _, tk := range tasksOf(t, a, p.PlanID) {
		tn := tk.TenantID
		calls := rt.of(tn)
		switch {
		case slices.Contains(ring0, tn):
			assert.Equal(t, "COMPLETED", tk.Status, "%s: ring 0 passed, it is not rolled back", tn)
			assert.Equal(t, []string{"s1", "s2"}, callPath(calls), "%s: no undo", tn)
		case slices.Contains(ring2, tn):
			assert.Equal(t, "CANCELLED", tk.Status, "%s: ring 2 never started; the reject cancelled it", tn)
			assert.Empty(t, calls, "%s: the target never saw ring 2", tn)
			assert.Empty(t, tk.Attempts, tn)
		default: // ring 1, the halted ring: rolled back
			assert.Equal(t, "ROLLED_BACK", tk.Status, tn)
			want := []string{"s1", "s2", "undo-s2", "undo-s1"}
			if failing[tn] != "" {
				want = []string{"s1", "s2", "undo-s1"} // s2 failed: only s1 was applied
			}
			if assert.Equal(t, want, callPath(calls), tn) {
				for _, c := range calls[2:] {
					undone := strings.TrimPrefix(c.Stage, undoPrefix)
					assert.Equal(t, fmt.Sprintf("v-%s-%s", tn, undone), c.Previous, "%s: %s received %s's output", tn, c.Stage, undone)
					assert.True(t, c.Completed, "%s: %s answered", tn, c.Stage)
					assert.Equal(t, 2, c.Run, "%s: the rollback is run 2", tn)
				}
			}
			full := tenantTask(t, a, tn)
			assert.Len(t, undoAttempts(full), len(want)-2, "%s ledger: %s", tn, attemptsLine(full.Attempts))
		}
	}
	assert.Empty(t, overlaps(rt.all()), "no tenant called twice at once")
	assert.Empty(t, fenceFaults(rt.all()))
}

// Two executors share one Redis. A tenant fails at its last stage (s3) and rolls back; the
// undo of s2 completes, the undo of s1 is held by the target (in run 2 only) and the executor
// running the rollback is killed (kill -9) while that call is in flight. The other executor
// finds the task INTERRUPTED, and `executor retry --tenant T --from-checkpoint` through it
// proves: the rollback resumes after its last completed undo (undo-s2 is not called again), the
// undo in flight is called again once, with the Idempotency-Key of the cut call (it was in
// doubt), no undo completes twice, the tenant ends ROLLED_BACK, and across both executors the
// target never saw two calls of the tenant in flight at once, nor a stale fence.
func TestKillDuringRollbackThenRetryOnAnotherExecutorUndoesEachStageOnce(t *testing.T) {
	t.Parallel()
	const tenant = "kr-000"
	rt := newRBTarget(t, map[string]string{tenant: "s3"}, nil)
	rs := redistest.Start(t)
	execs := map[string]*executorProc{
		"exec-a": startExecutor(t, "A", rs.URL(), "--name", "exec-a"),
		"exec-b": startExecutor(t, "B", rs.URL(), "--name", "exec-b"),
	}

	p := submitPlan(t, execs["exec-a"], wire.PlanRequest{
		Name: "kill-during-rollback", OnFailure: "rollback",
		// the rollback's run (2) is held at the undo of s1; a later run is not
		Stages:  rt.stages([]string{"s1", "s2", "s3"}, map[string]string{"s1": "{{if eq .Attempt 2}}&hold=1{{end}}"}),
		Tenants: []wire.TenantRequest{{ID: tenant}},
	})

	var held targetCall
	require.Eventually(t, func() bool {
		for _, c := range rt.of(tenant) {
			if c.Stage == "undo-s1" && c.End.IsZero() {
				held = c
				return true
			}
		}
		return false
	}, pollTimeout, 10*time.Millisecond, "the rollback calls the undo of s1")
	require.Equal(t, 2, held.Run)

	rolling := tenantTask(t, execs["exec-a"], tenant)
	require.Equal(t, "RUNNING", rolling.Status)
	require.True(t, rolling.RollingBack)
	require.Contains(t, execs, rolling.Executor, "the executor running the rollback")
	holder := execs[rolling.Executor]
	delete(execs, rolling.Executor)
	var survivor *executorProc
	survivorName := ""
	for name, e := range execs {
		survivor, survivorName = e, name
	}
	require.Equal(t, []string{"s1", "s2", "s3", "undo-s2", "undo-s1"}, callPath(rt.of(tenant)), "undo-s2 completed before the kill")

	holder.kill(t)
	t.Logf("killed %s mid-undo of s1; %s goes on", holder.name, survivor.name)
	require.Eventually(t, func() bool {
		return !rt.all()[held.ID].End.IsZero()
	}, pollTimeout, 10*time.Millisecond, "the held undo call ends with its caller")

	interrupted := pollTenant(t, survivor, tenant, "INTERRUPTED", nil, func(tk wire.Task) bool { return tk.Status == "INTERRUPTED" })
	assert.True(t, interrupted.RollingBack, "interrupted while rolling back")
	cut := tenantTask(t, survivor, tenant)
	undos := undoAttempts(cut)
	require.Len(t, undos, 2, "the undo of s2, then the one the kill cut: %s", attemptsLine(cut.Attempts))
	assert.Equal(t, "s2", undos[0].Stage)
	assert.Equal(t, "succeeded", undos[0].Outcome)
	assert.Equal(t, "s1", undos[1].Stage)
	assert.Equal(t, 2, undos[1].Run)
	assert.Equal(t, "in_doubt", undos[1].Outcome, "the survivor cannot know whether the cut undo reached the target")

	resumeAfterLoss(t, survivor, p.PlanID) // the holder's loss paused the plan
	r := runBinary(t, survivor.URL(), "retry", "--tenant", tenant, "--from-checkpoint", "-o", "json")
	requireExit(t, 0, r)

	final := pollTenant(t, survivor, tenant, "ROLLED_BACK", nil, func(tk wire.Task) bool { return tk.Status == "ROLLED_BACK" })
	assert.Equal(t, 3, final.Attempt, "the forward run, the cut rollback, its retry")
	assert.Equal(t, survivorName, final.Executor, "the survivor ran the retry")
	watched := watchEnded(t, survivor, p.PlanID, 1)
	assert.Equal(t, "FAILED", watched.Status)

	calls := rt.of(tenant)
	require.Equal(t, []string{"s1", "s2", "s3", "undo-s2", "undo-s1", "undo-s1"}, callPath(calls),
		"resumed after the last completed undo: undo-s2 is not called again")
	again := calls[5]
	assert.Equal(t, 3, again.Run, "the retry's run")
	assert.Equal(t, held.Key, again.Key, "the in-doubt undo is called again with its key")
	assert.Equal(t, fmt.Sprintf("%s/%s/undo:s1/2", p.PlanID, final.TaskID), again.Key)
	assert.Equal(t, fmt.Sprintf("v-%s-s1", tenant), again.Previous, "the retry reads s1's output from the checkpoint")
	assert.True(t, again.Completed)
	assert.False(t, rt.all()[held.ID].Completed, "the cut call never completed")
	completed := map[string]int{}
	for _, c := range calls {
		if c.Completed {
			completed[c.Stage]++
		}
	}
	assert.Equal(t, map[string]int{"s1": 1, "s2": 1, "undo-s2": 1, "undo-s1": 1}, completed, "no stage nor undo completed twice")

	done := tenantTask(t, survivor, tenant)
	undos = undoAttempts(done)
	if assert.Len(t, undos, 3, attemptsLine(done.Attempts)) {
		assert.Equal(t, cut.Attempts, done.Attempts[:len(cut.Attempts)], "the ledger keeps the cut attempt")
		assert.Equal(t, "s1", undos[2].Stage)
		assert.Equal(t, 3, undos[2].Run)
		assert.Equal(t, "succeeded", undos[2].Outcome)
	}
	assert.Empty(t, overlaps(rt.all()), "never two calls of the tenant in flight at once, across both executors")
	assert.Empty(t, fenceFaults(rt.all()), "no call with a stale fence")
}
