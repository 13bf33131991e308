package main_test

// Acceptance tests of issue 31 with real processes: executor A reaches Redis through a
// redistest.FaultProxy (B directly), runs tenants whose http stages call a recording target
// (fenceTarget), and is partitioned from Redis (black hole, connection resets), paused past its
// lease (SIGSTOP), or slowed (2 s of latency). Meanwhile an operator acts through B as
// docs/runbook.md says. What the target saw decides: no tenant with two calls in flight at
// once, no completed stage run again (but the one in_doubt stage of an interrupted run, with
// the same Idempotency-Key), every call fenced; and every tenant ends COMPLETED, A's API and
// B's agreeing once Redis is back.
//
// They are heavy and timed against the lease TTL: not parallel.

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/wire"
)

// The scenarios' lease TTLs (--lease-ttl). A partition lasts 3 of them, and begins with the
// tenants' 3 s calls in flight: A's lease deadline (its last confirmed refresh, at most TTL/3
// before, plus the TTL less a margin) falls within them. A SIGSTOP lasts 3 of them. Under
// latency a lease refresh sent every TTL/3 reaches Redis 2 s late, still well within the TTL.
const (
	partitionTTL = 3 * time.Second
	sigstopTTL   = 4 * time.Second
	latencyTTL   = 5 * time.Second
	stageMs      = 3000 // each stage's call takes 3 s
	// operatorDelay is how long after A's SIGCONT the operator acts: an SRE's reaction.
	operatorDelay = time.Second
	// hangUpBound bounds how long after its SIGCONT the woken A may take to hang up its calls:
	// "at once", its lease long expired (it takes milliseconds), not at its next heartbeat
	// (TTL/3 later), and before the operator can act.
	hangUpBound = operatorDelay / 2
)

// startWithTTL starts an executor named exec-<name> with lease TTL ttl (the flag given last
// wins over startExecutor's default) and checks that it took it.
func startWithTTL(t *testing.T, name, redisURL string, ttl time.Duration, extra ...string) *executorProc {
	t.Helper()
	p := startExecutor(t, name, redisURL, append([]string{"--name", "exec-" + strings.ToLower(name),
		"--lease-ttl", ttl.String()}, extra...)...)
	require.Eventually(t, func() bool { return strings.Contains(p.output.String(), `"lease_ttl":"`+ttl.String()+`"`) },
		5*time.Second, 20*time.Millisecond, "%s runs with lease TTL %s", name, ttl)
	return p
}

// submitTo submits a plan to p and returns it.
func submitTo(t *testing.T, p *executorProc, req wire.PlanRequest) wire.Plan {
	t.Helper()
	r := p.cli(t, "submit", "-f", writePlan(t, req), "-o", "json")
	requireExit(t, 0, r)
	return decode[wire.Plan](t, r.stdout)
}

// waitAllInFlight waits until every tenant has a call of stage by run 1 in flight: the only
// executor started so far holds all of them.
func waitAllInFlight(t *testing.T, ft *fenceTarget, stageName string, tenants []wire.TenantRequest) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Len(c, ft.inFlight(stageName, 1), len(tenants), "tenants with a call of %s in flight", stageName)
	}, pollTimeout, 10*time.Millisecond, "A runs every tenant's %s", stageName)
}

// operator is the SRE acting through one executor as docs/runbook.md says: a PAUSED plan is
// resumed (`plan resume`), its FAILED and INTERRUPTED tasks retried from their checkpoints
// (`plan retry --from-checkpoint`), round after round, with the CLI. It remembers what it read.
type operator struct {
	t       *testing.T
	via     *executorProc
	api     *client.Client
	planID  string
	tenants int

	interrupted map[string]int      // tenant → rounds it read INTERRUPTED
	failed      map[string][]string // tenant → the classes it read FAILED with
	resumes     int
	retries     int
	readErrors  int
}

func newOperator(t *testing.T, via *executorProc, planID string, tenants int) *operator {
	return &operator{t: t, via: via, api: client.New(via.URL(), "", nil), planID: planID, tenants: tenants,
		interrupted: map[string]int{}, failed: map[string][]string{}}
}

// round reads the plan's tasks and acts once; true when every task is COMPLETED.
func (o *operator) round() bool {
	o.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := o.api.PlanTasks(ctx, o.planID, client.TaskQuery{})
	if err != nil {
		o.readErrors++
		return false
	}
	completed, retry := 0, false
	for _, tk := range list.Tasks {
		switch tk.Status {
		case "COMPLETED":
			completed++
		case "INTERRUPTED":
			o.interrupted[tk.TenantID]++
			retry = true
		case "FAILED":
			class := "?"
			if tk.LastError != nil {
				class = tk.LastError.Class
			}
			o.failed[tk.TenantID] = append(o.failed[tk.TenantID], class)
			retry = true
		}
	}
	if completed == o.tenants && len(list.Tasks) == o.tenants {
		return true
	}
	if pl, err := o.api.Plan(ctx, o.planID, 0); err == nil && pl.Status == "PAUSED" {
		r := o.via.cli(o.t, "plan", "resume", o.planID)
		o.t.Logf("operator: plan resume (reason %q): exit %d %s", pl.Reason, r.code, strings.TrimSpace(r.stderr))
		o.resumes++
	}
	if retry {
		r := o.via.cli(o.t, "plan", "retry", o.planID, "--from-checkpoint", "-o", "json")
		o.retries++
		if r.code == 0 {
			pr := decode[wire.PlanRetry](o.t, r.stdout)
			o.t.Logf("operator: plan retry --from-checkpoint: %d retried, %d skipped", len(pr.Retried), len(pr.Skipped))
		} else {
			o.t.Logf("operator: plan retry --from-checkpoint: exit %d %s", r.code, strings.TrimSpace(r.stderr))
		}
	}
	return false
}

// until acts round after round (tick first in each) until every task is COMPLETED (true) or
// the deadline passes (false).
func (o *operator) until(deadline time.Time, tick func()) bool {
	o.t.Helper()
	for {
		if tick != nil {
			tick()
		}
		if o.round() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// failures lists every FAILED read, for assertions.
func (o *operator) failures() []string {
	var out []string
	for tenant, classes := range o.failed {
		out = append(out, fmt.Sprintf("%s FAILED (%s)", tenant, strings.Join(classes, ", ")))
	}
	sort.Strings(out)
	return out
}

// taskView is what one executor's API says of every task of a plan (GET /v1/tasks/{id} of
// each, with its checkpoint and ledger), and of the plan.
func taskView(ctx context.Context, api *client.Client, planID string) (map[string]string, error) {
	list, err := api.PlanTasks(ctx, planID, client.TaskQuery{})
	if err != nil {
		return nil, err
	}
	pl, err := api.Plan(ctx, planID, 0)
	if err != nil {
		return nil, err
	}
	out := map[string]string{"plan": fmt.Sprintf("%s missing %d", pl.Status, len(list.MissingTasks))}
	for _, listed := range list.Tasks {
		tk, err := api.Task(ctx, listed.TaskID)
		if err != nil {
			return nil, err
		}
		var cp []string
		if tk.Checkpoint != nil {
			cp = tk.Checkpoint.CompletedStages
		}
		var ledger []string
		for _, a := range tk.Attempts {
			ledger = append(ledger, fmt.Sprintf("%s/r%d/a%d:%s", a.Stage, a.Run, a.Attempt, a.Outcome))
		}
		out[tk.TenantID] = fmt.Sprintf("%s attempt %d stage %d by %s checkpoint %v ledger %v",
			tk.Status, tk.Attempt, tk.CurrentStage, tk.Executor, cp, ledger)
	}
	return out, nil
}

// assertSameView waits (up to 20 s) until A's API and B's say the same of the plan and every
// task, and fails with the difference when they never do. B never lost Redis: its view is
// Redis's.
func assertSameView(t *testing.T, a, b *executorProc, planID string) {
	t.Helper()
	apiA, apiB := client.New(a.URL(), "", nil), client.New(b.URL(), "", nil)
	var viewA, viewB map[string]string
	var errA, errB error
	same := assert.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		viewA, errA = taskView(ctx, apiA, planID)
		viewB, errB = taskView(ctx, apiB, planID)
		return errA == nil && errB == nil && assert.ObjectsAreEqual(viewA, viewB)
	}, 20*time.Second, 500*time.Millisecond, "A's API and B's (Redis's) never agreed on the plan")
	if !same {
		var diff []string
		for k, vb := range viewB {
			if va := viewA[k]; va != vb {
				diff = append(diff, fmt.Sprintf("%s:\n    A: %s\n    B: %s", k, va, vb))
			}
		}
		sort.Strings(diff)
		t.Logf("last reads: A err %v, B err %v; %d differences:\n%s", errA, errB, len(diff), firstLines(diff, 10))
	}
}

// ledgerStats counts, over the plan's final tasks, the in_doubt attempts per "tenant/stage"
// and the attempts of every outcome and class.
func ledgerStats(tasks []wire.Task) (inDoubt map[string]int, outcomes map[string]int) {
	inDoubt, outcomes = map[string]int{}, map[string]int{}
	for _, tk := range tasks {
		for _, a := range tk.Attempts {
			outcomes[a.Outcome+"/"+a.Class]++
			if a.Outcome == "in_doubt" {
				inDoubt[tk.TenantID+"/"+a.Stage]++
			}
		}
	}
	return inDoubt, outcomes
}

// finalTasks reads every task of the plan, with its ledger, through p.
func finalTasks(t *testing.T, p *executorProc, planID string) []wire.Task {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	api := client.New(p.URL(), "", nil)
	list, err := api.PlanTasks(ctx, planID, client.TaskQuery{})
	require.NoError(t, err)
	out := make([]wire.Task, 0, len(list.Tasks))
	for _, listed := range list.Tasks {
		tk, err := api.Task(ctx, listed.TaskID)
		require.NoError(t, err)
		out = append(out, *tk)
	}
	return out
}

// waitPlanCompleted waits (up to 20 s) for the plan to read COMPLETED on p.
func waitPlanCompleted(t *testing.T, p *executorProc, planID string) {
	t.Helper()
	api := client.New(p.URL(), "", nil)
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		pl, err := api.Plan(context.Background(), planID, 0)
		if assert.NoError(c, err) {
			assert.Equal(c, "COMPLETED", pl.Status, "reason: %s", pl.Reason)
		}
	}, 20*time.Second, 200*time.Millisecond, "the plan ends COMPLETED")
}

// assertTargetSafe asserts what the target saw: no tenant with two calls in flight at once,
// no completed stage run again (but the one allowed retry of each in_doubt attempt, with its
// Idempotency-Key), the retry of an in_doubt attempt sending that attempt's key, every call
// carrying its tenant's fencing token, epochs never going back.
func assertTargetSafe(t *testing.T, ft *fenceTarget, tasks []wire.Task) {
	t.Helper()
	calls := ft.all()
	inDoubt, outcomes := ledgerStats(tasks)
	over := overlaps(calls)
	var overLines []string
	for tenant, pairs := range over {
		overLines = append(overLines, fmt.Sprintf("%s: %d pairs, e.g. %s", tenant, len(pairs), pairs[0]))
	}
	sort.Strings(overLines)
	again := reruns(calls, inDoubt)
	fence := fenceFaults(calls)
	keys := inDoubtKeyFaults(calls, tasks)
	cut := 0
	for _, c := range calls {
		if !c.End.IsZero() && c.Status == 0 {
			cut++
		}
	}
	t.Logf("target: %d calls, %d hung up by their caller; ledgers: %v; in_doubt stages: %d",
		len(calls), cut, outcomes, len(inDoubt))
	assert.Empty(t, overLines, "%d tenants with two calls in flight at once:\n%s", len(over), firstLines(overLines, 5))
	assert.Empty(t, again, "%d completed stages run again:\n%s", len(again), firstLines(again, 5))
	assert.Empty(t, keys, "%d in_doubt stages retried with a new Idempotency-Key:\n%s", len(keys), firstLines(keys, 5))
	assert.Empty(t, fence, "%d calls not fenced:\n%s", len(fence), firstLines(fence, 5))
}

// assertAllCompleted asserts that every tenant's task ended COMPLETED.
func assertAllCompleted(t *testing.T, tasks []wire.Task, tenants int) {
	t.Helper()
	var notDone []string
	for _, tk := range tasks {
		if tk.Status != "COMPLETED" {
			cls := ""
			if tk.LastError != nil {
				cls = " " + tk.LastError.Class + ": " + tk.LastError.Message
			}
			notDone = append(notDone, fmt.Sprintf("%s %s at stage %d%s", tk.TenantID, tk.Status, tk.CurrentStage, cls))
		}
	}
	sort.Strings(notDone)
	assert.Len(t, tasks, tenants)
	assert.Empty(t, notDone, "%d tenants did not end COMPLETED:\n%s", len(notDone), firstLines(notDone, 10))
}

// A partition of A from Redis lasting 3 lease TTLs while A runs 20 tenants of 3 stages of 3 s
// each. A holds all 20 before B exists: it is the only executor when the plan is submitted
// (maxConcurrency and --workers 20); once the target sees all 20 tenants' s1 calls in flight,
// A is partitioned (its lease deadline then falls within those calls) and B starts, with
// nothing left to claim. The operator acts through B during the partition and after it, as
// the runbook says, until every tenant is COMPLETED (45 s at most).
func runPartition(t *testing.T, kind string, partition func(*redistest.FaultProxy)) {
	t.Helper()
	ft := newFenceTarget(t)
	rs := redistest.Start(t)
	proxy := rs.NewProxy()
	const n = 20
	tenants := tenantsN("p", n)

	a := startWithTTL(t, "A", proxy.URL(), partitionTTL, "--workers", "20")
	submitted := submitTo(t, a, wire.PlanRequest{Name: "partition-" + kind, MaxConcurrency: n,
		Stages: ft.stages(stageMs, []string{"s1", "s2", "s3"}), Tenants: tenants})
	waitAllInFlight(t, ft, "s1", tenants)
	partition(proxy) // at the start of s1: A's lease deadline falls within the 3 s call
	cutAt := time.Now()
	b := startWithTTL(t, "B", rs.URL(), partitionTTL)
	healAt := cutAt.Add(3 * partitionTTL)
	healed := false
	op := newOperator(t, b, submitted.PlanID, n)
	done := op.until(cutAt.Add(45*time.Second), func() {
		if !healed && time.Now().After(healAt) {
			proxy.Restore()
			healed = true
			t.Logf("%s: healed after %s", kind, time.Since(cutAt).Round(time.Millisecond))
		}
	})
	if !healed {
		proxy.Restore()
	}
	t.Logf("%s: operator done=%t after %s: %d resumes, %d retries, %d tenants read INTERRUPTED, %d read errors",
		kind, done, time.Since(cutAt).Round(time.Millisecond), op.resumes, op.retries, len(op.interrupted), op.readErrors)
	if assert.True(t, done, "every tenant COMPLETED within 45 s of the partition") {
		waitPlanCompleted(t, b, submitted.PlanID)
	}

	tasks := finalTasks(t, b, submitted.PlanID)
	assertTargetSafe(t, ft, tasks)
	assertAllCompleted(t, tasks, n)
	assert.Empty(t, op.failures(), "no task failed")
	assertSameView(t, a, b, submitted.PlanID)
}

// A black hole: A's connections to Redis stay open, nothing gets through (a dropped route).
func TestPartitionBlackHoleOfAnExecutorNeverRunsATenantTwice(t *testing.T) {
	runPartition(t, "black-hole", (*redistest.FaultProxy).BlackHole)
}

// Connection resets: A's connections to Redis are closed and new ones refused.
func TestPartitionConnectionResetsOfAnExecutorNeverRunsATenantTwice(t *testing.T) {
	runPartition(t, "resets", (*redistest.FaultProxy).Cut)
}

// A is SIGSTOPped during a long stage (held by the target) until B has reaped its 3 tenants
// INTERRUPTED, at least 3 lease TTLs; then SIGCONT, and a moment later (operatorDelay, an
// SRE's reaction) the operator resumes the plan and retries the tenants from their
// checkpoints through B, until all are COMPLETED. The woken A must hang up its in-flight calls
// before doing anything else, its leases long expired: the target sees each of them closed by
// its caller within hangUpBound of the wake-up, before the tenant's first call of a later run,
// and A's run (run 1) never calls again; B's retry takes the tenant (no tenant_locked) and
// completes it.
//
// The operator does not act while A is stopped: a frozen process cannot hang up, so B's call
// would overlap A's whatever the executor does (only a target checking Executor-Fence could
// refuse A's later calls). Nor at the very instant of the wake-up: whether the woken A's first
// instructions beat B's first call by a few milliseconds is the machine's scheduling, not the
// executor's design.
func TestSIGSTOPPastTheLeaseTheWokenExecutorHangsUpAndNeverCallsAgain(t *testing.T) {
	ft := newFenceTarget(t)
	rs := redistest.Start(t)
	const n = 3
	tenants := tenantsN("z", n)

	a := startWithTTL(t, "A", rs.URL(), sigstopTTL, "--workers", "3")
	t.Cleanup(func() { _ = a.cmd.Process.Signal(syscall.SIGCONT) }) // before its kill: whatever failed
	submitted := submitTo(t, a, wire.PlanRequest{Name: "sigstop", MaxConcurrency: n,
		Stages: ft.stages(200, []string{"s1", "s2", "s3"}, "s2"), Tenants: tenants})
	waitAllInFlight(t, ft, "s2", tenants)
	b := startWithTTL(t, "B", rs.URL(), sigstopTTL)
	api := client.New(b.URL(), "", nil)

	require.NoError(t, a.cmd.Process.Signal(syscall.SIGSTOP))
	stoppedAt := time.Now()
	require.Eventually(t, func() bool {
		list, err := api.PlanTasks(context.Background(), submitted.PlanID, client.TaskQuery{Status: "INTERRUPTED"})
		return err == nil && len(list.Tasks) == n
	}, 30*time.Second, 200*time.Millisecond, "B reaps A's %d tenants INTERRUPTED while A is stopped", n)
	reapedAfter := time.Since(stoppedAt)
	time.Sleep(time.Until(stoppedAt.Add(3 * sigstopTTL)))
	wokeAt := time.Now() // before the signal: the woken A may hang up before Signal returns
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGCONT))
	t.Logf("A stopped %s (lease TTL %s); B read its tenants INTERRUPTED %s after the stop",
		wokeAt.Sub(stoppedAt).Round(time.Millisecond), sigstopTTL, reapedAfter.Round(time.Millisecond))
	time.Sleep(operatorDelay)

	// The operator acts at once; the held calls are released once every tenant has a call of a
	// later run (or 15 s after the wake-up), so that the later runs can complete.
	op := newOperator(t, b, submitted.PlanID, n)
	done := op.until(wokeAt.Add(30*time.Second), func() {
		later := map[string]bool{}
		for _, c := range ft.all() {
			if c.Run > 1 {
				later[c.Tenant] = true
			}
		}
		if len(later) == n || time.Since(wokeAt) > 15*time.Second {
			ft.release()
		}
	})
	t.Logf("operator done=%t after %s: %d resumes, %d retries", done, time.Since(wokeAt).Round(time.Millisecond), op.resumes, op.retries)
	if assert.True(t, done, "every tenant COMPLETED within 30 s of the wake-up") {
		waitPlanCompleted(t, b, submitted.PlanID)
	}

	for tenant, calls := range byTenant(ft.all()) {
		var held *targetCall
		var firstLater *targetCall
		for i, c := range calls {
			if c.Stage == "s2" && c.Run == 1 && held == nil {
				held = &calls[i]
			}
			if c.Run > 1 && firstLater == nil {
				firstLater = &calls[i]
			}
			if c.Run == 1 && held != nil && c.ID != held.ID {
				assert.Failf(t, "the stopped run called again", "%s: after its held call %s\n    %s", tenant, *held, c)
			}
		}
		require.NotNil(t, held, "%s: A's s2 call", tenant)
		if !assert.False(t, held.End.IsZero(), "%s: A's s2 call never ended: %s", tenant, *held) {
			continue
		}
		assert.Zero(t, held.Status, "%s: A's s2 call was hung up by A, not answered: %s", tenant, *held)
		assert.True(t, held.End.After(wokeAt), "%s: A could not hang up while stopped: %s", tenant, *held)
		assert.LessOrEqual(t, held.End.Sub(wokeAt), hangUpBound,
			"%s: the woken A hangs up at once, its lease long past: %s", tenant, *held)
		if assert.NotNil(t, firstLater, "%s: B's retry called the tenant", tenant) {
			assert.True(t, held.over(firstLater.Start), "%s: A's call ended before the next run's first call\n    A: %s\n    next: %s",
				tenant, *held, *firstLater)
			t.Logf("%s: A hung up %s after waking, %s before the next run's first call", tenant,
				held.End.Sub(wokeAt).Round(time.Millisecond), firstLater.Start.Sub(held.End).Round(time.Millisecond))
		}
	}

	tasks := finalTasks(t, b, submitted.PlanID)
	var locked []string
	for _, tk := range tasks {
		for _, at := range tk.Attempts {
			if at.Class == "tenant_locked" {
				locked = append(locked, fmt.Sprintf("%s run %d %s: %s", tk.TenantID, at.Run, at.Stage, at.Error))
			}
		}
	}
	for _, f := range op.failures() {
		if strings.Contains(f, "tenant_locked") {
			locked = append(locked, "read "+f)
		}
	}
	assert.Empty(t, locked, "no tenant_locked failures: the woken A did not take its reaped leases back")
	assertTargetSafe(t, ft, tasks)
	assertAllCompleted(t, tasks, n)
	assert.Empty(t, op.failures(), "no task failed")
	assertSameView(t, a, b, submitted.PlanID)
}

// 2 s of latency on A's Redis link (every request reaches Redis 2 s late) for 20 s, while A
// runs 10 tenants of 3 stages of 3 s (A holds them all before B starts, as in runPartition;
// the latency begins with their s1 calls),
// lease TTL 5 s; the operator acts through B. Whatever A's self-fencing leases make of the
// latency, no tenant is in two calls at once, nothing completed runs again (but an in-doubt
// stage, with its key), and every tenant ends COMPLETED.
//
// And A is slow, not gone: no task is reaped INTERRUPTED, no stage is in doubt. A's leases
// refresh every TTL/5 and its writes are not cut at the lease deadline as it stood when they
// began (the refreshes move it on); its pipeline streams commands on one held connection
// (full-duplex), each answered one round trip after it was sent.
func TestLatencyOnAnExecutorsRedisLinkNeverRunsATenantTwice(t *testing.T) {
	ft := newFenceTarget(t)
	rs := redistest.Start(t)
	proxy := rs.NewProxy()
	const n = 10
	const latency, slowFor = 2 * time.Second, 20 * time.Second
	tenants := tenantsN("l", n)

	a := startWithTTL(t, "A", proxy.URL(), latencyTTL, "--workers", "10")
	submitted := submitTo(t, a, wire.PlanRequest{Name: "latency", MaxConcurrency: n,
		Stages: ft.stages(stageMs, []string{"s1", "s2", "s3"}), Tenants: tenants})
	waitAllInFlight(t, ft, "s1", tenants)
	proxy.SetLatency(latency)
	slowAt := time.Now()
	b := startWithTTL(t, "B", rs.URL(), latencyTTL)
	fast := false
	op := newOperator(t, b, submitted.PlanID, n)
	done := op.until(slowAt.Add(50*time.Second), func() {
		if !fast && time.Since(slowAt) > slowFor {
			proxy.SetLatency(0)
			fast = true
		}
	})
	if !fast {
		proxy.SetLatency(0)
	}
	t.Logf("operator done=%t after %s: %d resumes, %d retries; proxy %+v", done,
		time.Since(slowAt).Round(time.Millisecond), op.resumes, op.retries, proxy.Stats())
	if assert.True(t, done, "every tenant COMPLETED within 50 s of the latency's start") {
		waitPlanCompleted(t, b, submitted.PlanID)
	}

	tasks := finalTasks(t, b, submitted.PlanID)
	var interrupted []string
	for tenant, rounds := range op.interrupted {
		interrupted = append(interrupted, fmt.Sprintf("%s (read INTERRUPTED in %d rounds)", tenant, rounds))
	}
	for _, tk := range tasks {
		for _, at := range tk.Attempts {
			if at.Outcome == "interrupted" || at.Outcome == "in_doubt" {
				interrupted = append(interrupted, fmt.Sprintf("%s ledger: %s run %d %s %s", tk.TenantID, at.Stage, at.Run, at.Outcome, at.Class))
			}
		}
	}
	sort.Strings(interrupted)
	assert.Empty(t, interrupted, "A is slow, not gone: no task interrupted, no stage in doubt")
	assertTargetSafe(t, ft, tasks)
	assertAllCompleted(t, tasks, n)
	assert.Empty(t, op.failures(), "no task failed")
	assertSameView(t, a, b, submitted.PlanID)
}
