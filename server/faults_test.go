package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/stagekind"
	"github.com/executor-dev/executor/wire"
)

// Fault injection between one executor and Redis (see redistest.Faults for the mechanism):
// FAULT_PLANS plans (default faultPlans), FAULT_SEED seeds the proxy's decisions (default 1),
// FAULT_DUMP=1 prints every write that lost a compare-and-set and every write-back refusal,
// FAULT_LOGDIR=dir writes the executor's whole log there when the test fails.
// Each plan has two tenants of its own and three stages: noop, a 100 ms sleep, noop; the
// sleep and the few plans in flight spread the run over 15-45 s, so that the faults hit an
// executor that is on Redis most of the time (with 8 plans in flight and no sleep, 200 plans
// end in 2 s, nearly all on memory during one degraded spell).
const (
	faultPlans       = 200
	faultParallel    = 4    // plans in flight at once
	faultDrop        = 0.02 // connection dropped before the request reaches Redis
	faultLoseReply   = 0.02 // connection dropped after it: Redis applied it, the reply is lost
	faultDelay       = 0.03 // request held past the client timeout (then lost, or late)
	faultHold        = 1500 * time.Millisecond
	faultPlanTimeout = 15 * time.Second // one plan, submission to terminal (a few seconds at worst when healthy)
)

func ftEnvInt(name string, def int64) int64 {
	if v, err := strconv.ParseInt(os.Getenv(name), 10, 64); err == nil {
		return v
	}
	return def
}

// ftPlanResult is one plan's fate.
type ftPlanResult struct {
	n      int
	planID string
	status string
	err    error
	took   time.Duration
}

// Every plan submitted while 7 % of the executor's Redis round trips suffer a fault ends;
// once the faults stop and the executor has written everything back, Redis holds what the
// executor holds, both as its API reads it while on Redis and as it reads it from its
// memory mirror. The faults (redistest.FaultProxy between the executor and Redis, decided
// per request chunk by a seeded math/rand): 2 % connection dropped before the request, 2 %
// dropped after it (reply lost), 3 % request held 1.5 s, past the 1 s client timeout. Two
// subtests, each with its own Redis and executor, differ in what becomes of a held request:
// "lost" discards it (Redis never sees it), "late" forwards it after the client's retry.
// Plans that end other than COMPLETED are counted and printed, not failed.
func TestFaultInjectionEveryPlanEndsAndRedisEqualsMemory(t *testing.T) {
	t.Parallel()
	for _, late := range []bool{false, true} {
		name := map[bool]string{false: "lost", true: "late"}[late]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ftRun(t, late)
		})
	}
}

func ftRun(t *testing.T, late bool) {
	seed := ftEnvInt("FAULT_SEED", 1)
	plans := int(ftEnvInt("FAULT_PLANS", faultPlans))
	rs := redistest.Start(t)
	fp := rs.NewFaultProxy(redistest.Faults{Seed: seed, Drop: faultDrop, LoseReply: faultLoseReply, Delay: faultDelay, Hold: faultHold, Late: late})
	logs := &servertest.Buffer{}
	srv := servertest.With(t, server.Config{RedisURL: fp.URL(), Topology: server.TopologyAlone, LeaseTTL: 2 * time.Second,
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	fp.Inject(true)
	start := time.Now()
	if dir := os.Getenv("FAULT_LOGDIR"); dir != "" {
		// On failure, the executor's whole log (JSON lines), for the timeline around a diff.
		t.Cleanup(func() {
			if t.Failed() {
				name := fmt.Sprintf("%s/ft-%s-seed%d-%d.jsonl", dir, map[bool]string{false: "lost", true: "late"}[late], seed, time.Now().UnixNano())
				_ = os.WriteFile(name, []byte(logs.String()), 0o644)
				t.Logf("executor log written to %s", name)
			}
		})
	}

	results := make([]ftPlanResult, plans)
	work := make(chan int)
	var wg sync.WaitGroup
	for range faultParallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range work {
				results[n] = ftRunPlan(srv, n)
			}
		}()
	}
	for n := range plans {
		work <- n
	}
	close(work)
	wg.Wait()
	stats := fp.Stats()
	fp.Inject(false)
	faultsOff := time.Now()
	t.Logf("seed %d: %d plans in %v; proxy: %d chunks, %d dropped before Redis, %d replies lost, %d delayed",
		seed, plans, time.Since(start).Round(time.Millisecond), stats.Chunks, stats.Dropped, stats.RepliesLost, stats.Delayed)

	byStatus := map[string]int{}
	var slowest time.Duration
	detailed := 0
	for _, r := range results {
		byStatus[r.status]++
		slowest = max(slowest, r.took)
		if r.err != nil || r.status != "COMPLETED" {
			t.Logf("plan #%d %s: status %q err %v", r.n, r.planID, r.status, r.err)
			if r.planID != "" && detailed < 10 {
				detailed++
				ftLogTasks(t, srv, logs, r.planID)
			}
		}
	}
	ftLogOutages(t, logs)
	if os.Getenv("FAULT_DUMP") != "" {
		ftDump(t, logs)
	}
	t.Logf("plans by status: %v; slowest %v", byStatus, slowest.Round(time.Millisecond))
	for _, r := range results {
		assert.NoError(t, r.err, "plan #%d %s", r.n, r.planID)
		assert.Contains(t, []string{"COMPLETED", "FAILED", "CANCELLED"}, r.status, "plan #%d %s ends", r.n, r.planID)
	}

	// Faults off: once every held request has landed (or been dropped), the executor leaves
	// degraded mode with nothing left to write back.
	time.Sleep(time.Until(faultsOff.Add(faultHold + 500*time.Millisecond)))
	require.Eventually(t, func() bool {
		h := cfReadyz(srv)
		return h.Redis == "ok" && (h.Journal == nil || *h.Journal == 0)
	}, 20*time.Second, 20*time.Millisecond, "the executor is back on Redis, journal empty")

	var planIDs []string
	for _, r := range results {
		if r.planID != "" {
			planIDs = append(planIDs, r.planID)
		}
	}
	want := ftRedisView(t, rs, planIDs)
	for _, r := range results {
		if r.planID != "" && r.err == nil {
			assert.Equal(t, r.status, want.plans[r.planID], "plan #%d %s: Redis keeps the end the API reported", r.n, r.planID)
		}
	}
	// Read before the API's reads below (a read reaps a RUNNING copy it finds ownerless, which
	// would hide a lost completion behind an INTERRUPTED).
	for id, tv := range want.tasks {
		if tv.Status != "COMPLETED" && want.plans[want.planOf[id]] == "COMPLETED" {
			t.Errorf("task %s: Redis holds %+v, its plan %s COMPLETED", id, tv, want.planOf[id])
		}
	}

	// The executor's API while it is on Redis. Its reads keep its mirror's copy of a task
	// when that is newer (same fence, later updatedAt): where Redis and memory disagree on a
	// task, this view shows memory, and the raw Redis view is the one that differs.
	online := ftAPIView(t, srv, planIDs)
	ftCompareViews(t, logs, "API on Redis", want, online)

	// The executor's memory: cut it off Redis (its next read finds Redis away and it serves
	// from the mirror), read the same through its API, and let it back.
	fp.Cut()
	_, _ = cfTryHTTP(http.MethodGet, srv.URL()+"/v1/plans/"+planIDs[0], "", nil)
	require.Eventually(t, func() bool { return cfReadyz(srv).Redis == "degraded" }, 10*time.Second, 20*time.Millisecond)
	offline := ftAPIView(t, srv, planIDs)
	require.Equal(t, "degraded", cfReadyz(srv).Redis, "the whole view was read from memory")
	ftCompareViews(t, logs, "API on memory", want, offline)
	fp.Restore()
	require.Eventually(t, func() bool { return cfReadyz(srv).Redis == "ok" }, 20*time.Second, 20*time.Millisecond)
	t.Logf("whole test %v", time.Since(start).Round(time.Millisecond))
}

// ftRunPlan submits plan n (two tenants of its own, three short stages) and waits until
// it is terminal.
func ftRunPlan(srv *server.Server, n int) (res ftPlanResult) {
	res.n = n
	begin := time.Now()
	defer func() { res.took = time.Since(begin) }()
	body := fmt.Sprintf(`{"name":"fault-%d","stages":[{"name":"one","kind":"noop"},
	  {"name":"two","kind":"sleep","params":{"duration":"100ms"}},{"name":"three","kind":"noop"}],
	  "tenants":[{"id":"f%03d-a"},{"id":"f%03d-b"}]}`, n, n, n)
	var p wire.Plan
	if _, err := cfTryHTTP(http.MethodPost, srv.URL()+"/v1/plans", body, &p); err != nil {
		res.err = err
		return res
	}
	res.planID, res.status = p.PlanID, p.Status
	deadline := begin.Add(faultPlanTimeout)
	for time.Now().Before(deadline) {
		// Short long polls: a task whose run was lost is only found (and interrupted) by a read.
		if _, err := cfTryHTTP(http.MethodGet, srv.URL()+"/v1/plans/"+p.PlanID+"?wait=3s", "", &p); err != nil {
			res.err = err
			time.Sleep(100 * time.Millisecond)
			continue
		}
		res.err, res.status = nil, p.Status
		switch p.Status {
		case "COMPLETED", "FAILED", "CANCELLED":
			return res
		}
	}
	if res.err == nil {
		res.err = fmt.Errorf("not terminal after %v: %s %v", faultPlanTimeout, p.Status, p.Progress)
	}
	return res
}

// ftLogTasks prints a plan's tasks (with lease and checkpoint) and the executor's log
// records about them.
func ftLogTasks(t *testing.T, srv *server.Server, logs *servertest.Buffer, planID string) {
	t.Helper()
	var p wire.Plan
	if _, err := cfTryHTTP(http.MethodGet, srv.URL()+"/v1/plans/"+planID+"?include=taskIds", "", &p); err != nil {
		t.Logf("  plan: %v", err)
		return
	}
	for _, id := range p.TaskIDs {
		var tk wire.Task
		if _, err := cfTryHTTP(http.MethodGet, srv.URL()+"/v1/tasks/"+id, "", &tk); err != nil {
			t.Logf("  task %s: %v", id, err)
			continue
		}
		lastErr, _ := json.Marshal(tk.LastError)
		lease, _ := json.Marshal(tk.Lease)
		ckpt, _ := json.Marshal(tk.Checkpoint)
		t.Logf("  task %s %s: %s attempt %d stage %d lastError %s lease %s checkpoint %s",
			tk.TaskID, tk.TenantID, tk.Status, tk.Attempt, tk.CurrentStage, lastErr, lease, ckpt)
		for _, rec := range logRecords(logs) {
			if rec["task_id"] == id || rec["tenant_id"] == tk.TenantID || rec["tenant"] == tk.TenantID {
				b, _ := json.Marshal(rec)
				t.Logf("    %s", b)
			}
		}
	}
}

// ftTaskView is what is compared of a task.
type ftTaskView struct {
	Status    string
	Attempt   int
	Stage     int
	Completed []string // checkpoint completedStages; nil when there is no checkpoint
}

type ftView struct {
	plans  map[string]string     // plan id → status
	tasks  map[string]ftTaskView // task id → view
	order  []string              // task ids
	planOf map[string]string     // task id → plan id (ftRedisView)
}

// ftRedisView reads the plans and tasks as Redis holds them, raw.
func ftRedisView(t *testing.T, rs *redistest.Server, planIDs []string) ftView {
	t.Helper()
	c := rs.Client()
	keys := rediskey.New("")
	ctx := context.Background()
	v := ftView{plans: map[string]string{}, tasks: map[string]ftTaskView{}, planOf: map[string]string{}}
	for _, id := range planIDs {
		h, err := c.HGetAll(ctx, keys.Plan(id)).Result()
		require.NoError(t, err)
		require.NotEmpty(t, h, "plan %s in Redis", id)
		v.plans[id] = h["status"]
		var taskIDs []string
		require.NoError(t, json.Unmarshal([]byte(h["taskIds"]), &taskIDs), "plan %s taskIds %q", id, h["taskIds"])
		for _, tid := range taskIDs {
			th, err := c.HGetAll(ctx, keys.Task(tid)).Result()
			require.NoError(t, err)
			require.NotEmpty(t, th, "task %s in Redis", tid)
			tv := ftTaskView{Status: th["status"]}
			tv.Attempt, err = strconv.Atoi(th["attempt"])
			require.NoError(t, err, "task %s attempt", tid)
			tv.Stage, err = strconv.Atoi(th["stage"])
			require.NoError(t, err, "task %s stage", tid)
			raw, err := c.Get(ctx, keys.Checkpoint(tid)).Result()
			if err == nil {
				var cp wire.Checkpoint
				require.NoError(t, json.Unmarshal([]byte(raw), &cp))
				tv.Completed = append([]string{}, cp.CompletedStages...)
			}
			v.tasks[tid] = tv
			v.order = append(v.order, tid)
			v.planOf[tid] = id
		}
	}
	return v
}

// ftAPIView reads the same through the executor's API.
func ftAPIView(t *testing.T, srv *server.Server, planIDs []string) ftView {
	t.Helper()
	v := ftView{plans: map[string]string{}, tasks: map[string]ftTaskView{}}
	for _, id := range planIDs {
		var p wire.Plan
		cfHTTP(t, http.MethodGet, srv.URL()+"/v1/plans/"+id+"?include=taskIds", "", &p)
		v.plans[id] = p.Status
		for _, tid := range p.TaskIDs {
			var tk wire.Task
			cfHTTP(t, http.MethodGet, srv.URL()+"/v1/tasks/"+tid, "", &tk)
			tv := ftTaskView{Status: tk.Status, Attempt: tk.Attempt, Stage: tk.CurrentStage}
			if tk.Checkpoint != nil {
				tv.Completed = append([]string{}, tk.Checkpoint.CompletedStages...)
			}
			v.tasks[tid] = tv
			v.order = append(v.order, tid)
		}
	}
	return v
}

// ftCompareViews asserts that exec shows what Redis holds; for a task that differs, it prints
// the executor's log records about it.
func ftCompareViews(t *testing.T, logs *servertest.Buffer, what string, redis, exec ftView) {
	t.Helper()
	var diffs []string
	differ := map[string]bool{}
	for id, st := range redis.plans {
		if exec.plans[id] != st {
			diffs = append(diffs, fmt.Sprintf("plan %s: Redis %s, %s %s", id, st, what, exec.plans[id]))
		}
	}
	for _, id := range redis.order {
		r, e := redis.tasks[id], exec.tasks[id]
		if fmt.Sprint(r) != fmt.Sprint(e) {
			diffs = append(diffs, fmt.Sprintf("task %s: Redis %+v, %s %+v", id, r, what, e))
			differ[id] = true
		}
	}
	for _, rec := range logRecords(logs) {
		if id, _ := rec["task_id"].(string); differ[id] {
			b, _ := json.Marshal(rec)
			t.Logf("  %s", b)
		}
	}
	assert.Equal(t, len(redis.order), len(exec.order), "%s: task count", what)
	sort.Strings(diffs)
	assert.Empty(t, diffs, "%s differs from Redis:\n%s", what, strings.Join(diffs, "\n"))
}

// ftLogOutages summarises the executor's log: its outages (degraded spells) and what started
// them, and its warnings and errors by message.
func ftLogOutages(t *testing.T, logs *servertest.Buffer) {
	t.Helper()
	causes := map[string]int{}
	msgs := map[string]int{}
	outages, recoveries := 0, 0
	for _, rec := range logRecords(logs) {
		msg, _ := rec["msg"].(string)
		if strings.HasPrefix(msg, "redis answers again") {
			recoveries++
		}
		if strings.HasPrefix(msg, "redis unavailable") {
			outages++
			cause, _ := rec["err"].(string)
			if i := strings.Index(cause, ": "); i > 0 {
				cause = cause[:i]
			}
			causes[cause]++
		}
		if rec["level"] == "WARN" || rec["level"] == "ERROR" {
			msgs[fmt.Sprint(rec["level"], " ", msg)]++
		}
		if rec["level"] == "ERROR" {
			b, _ := json.Marshal(rec)
			t.Logf("  %s", b)
		}
	}
	t.Logf("outages: %d (%d over), started by %v", outages, recoveries, causes)
	t.Logf("warnings and errors: %v", msgs)
}

// ftOnceRule returns a Rule that gives the first chunk re matches fault, and passes the rest.
func ftOnceRule(re *regexp.Regexp, fault redistest.Fault, fired *atomic.Bool) func([]byte) redistest.Fault {
	return func(chunk []byte) redistest.Fault {
		if fired.Load() || !re.Match(chunk) {
			return redistest.Fault{}
		}
		fired.Store(true)
		return fault
	}
}

// ftReproExecutor is an executor (lease TTL 1s) behind a fault proxy following rule once
// injecting starts; scripts are loaded first by a plan run without faults (so that a fault
// hits an EVALSHA, not a NOSCRIPT reply).
func ftReproExecutor(t *testing.T, rule func([]byte) redistest.Fault, register ...func(*stagekind.Registry)) (*redistest.Server, *redistest.FaultProxy, *server.Server) {
	t.Helper()
	rs := redistest.Start(t)
	fp := rs.NewFaultProxy(redistest.Faults{Rule: rule})
	srv := servertest.With(t, server.Config{RedisURL: fp.URL(), Topology: server.TopologyAlone, LeaseTTL: time.Second}, register...)
	warm := ftReproPlan(t, srv, "warm-up", "warm", `{"name":"s","kind":"noop"}`)
	require.Equal(t, "COMPLETED", ftReproWait(t, srv, warm.PlanID, 10*time.Second).Status)
	fp.Inject(true)
	return rs, fp, srv
}

func ftReproPlan(t *testing.T, srv *server.Server, name, tenant string, stages ...string) wire.Plan {
	t.Helper()
	var p wire.Plan
	body := `{"name":"` + name + `","stages":[` + strings.Join(stages, ",") + `],"tenants":[{"id":"` + tenant + `"}]}`
	cfHTTP(t, http.MethodPost, srv.URL()+"/v1/plans", body, &p)
	return p
}

// ftReproWait polls the plan until it is terminal or d has passed, and returns it as it is.
func ftReproWait(t *testing.T, srv *server.Server, planID string, d time.Duration) wire.Plan {
	t.Helper()
	var p wire.Plan
	deadline := time.Now().Add(d)
	for {
		cfHTTP(t, http.MethodGet, srv.URL()+"/v1/plans/"+planID+"?wait=1s", "", &p)
		switch p.Status {
		case "COMPLETED", "FAILED", "CANCELLED":
			return p
		}
		if time.Now().After(deadline) {
			return p
		}
	}
}

func ftRawTask(t *testing.T, rs *redistest.Server, taskID string) map[string]string {
	t.Helper()
	h, err := rs.Client().HGetAll(context.Background(), rediskey.New("").Task(taskID)).Result()
	require.NoError(t, err)
	return h
}

// ftLateFault holds a request 3 s, well past the 1 s client timeout, and forwards it after the
// client's retry.
var ftLateFault = redistest.Fault{Kind: redistest.Delay, Late: true, Hold: 3 * time.Second}

// ftBumpFence matches a fence bump on the wire: bump_fence.lua by EVALSHA, one key (a task
// hash), ARGV the bump's token (<writer>.<n>: create_task.lua, also one task key, has field
// names, without a dot, for ARGV).
var ftBumpFence = regexp.MustCompile(`(?is)evalsha\r\n\$40\r\n[0-9a-f]{40}\r\n\$1\r\n1\r\n\$\d+\r\nexecutor:task:\{[^}]*\}\r\n\$\d+\r\n[0-9a-z]{6}\.[0-9a-z]+\r\n`)

const ftNoop3 = `{"name":"one","kind":"noop"},{"name":"two","kind":"noop"},{"name":"three","kind":"noop"}`

// Targeted, deterministic reproductions of what the fault test finds: one request, chosen by
// its bytes (a regexp over the RESP the executor sends), suffers one fault. Each subtest
// asserts the correct outcome, so it fails while its bug is there.
// TestFaultRepro replays, one request at a time, the faults that once broke the executor:
// each subtest describes the bug it guards against (each used to fail).
func TestFaultRepro(t *testing.T) {
	t.Parallel()

	// A stage's save (save_task.lua) reaches Redis after the client's retry and after the
	// task's later saves. It used to be applied (its epoch is the run's own), taking Redis back
	// to the task as it was after stage one while the executor reported it COMPLETED; since
	// df74609 save_task.lua refuses it (stored updatedAt later at the same epoch).
	t.Run("LateStageSaveRegressesACompletedTask", func(t *testing.T) {
		t.Parallel()
		fired := &atomic.Bool{}
		rs, _, srv := ftReproExecutor(t, ftOnceRule(regexp.MustCompile(`"completedStages":\["one"\]`), ftLateFault, fired))
		p := ftReproPlan(t, srv, "late-save", "late-save", ftNoop3)
		require.Equal(t, "COMPLETED", ftReproWait(t, srv, p.PlanID, 10*time.Second).Status)
		require.True(t, fired.Load())
		time.Sleep(3500 * time.Millisecond) // the held request has landed
		h := ftRawTask(t, rs, p.TaskIDs[0])
		ckpt, _ := rs.Client().Get(context.Background(), rediskey.New("").Checkpoint(p.TaskIDs[0])).Result()
		assert.Equal(t, "COMPLETED", h["status"], "Redis's task hash")
		assert.Equal(t, "3", h["stage"], "Redis's task hash")
		assert.Contains(t, ckpt, `"completedStages":["one","two","three"]`, "Redis's checkpoint")
		var tk wire.Task
		cfHTTP(t, http.MethodGet, srv.URL()+"/v1/tasks/"+p.TaskIDs[0], "", &tk)
		t.Logf("the executor reads %s stage %d; Redis holds %s stage %s, checkpoint %s", tk.Status, tk.CurrentStage, h["status"], h["stage"], ckpt)
		require.NoError(t, srv.Stop(context.Background())) // alone on its Redis: the reader comes after it
		other := servertest.With(t, server.Config{RedisURL: rs.URL(), LeaseTTL: time.Second})
		cfHTTP(t, http.MethodGet, other.URL()+"/v1/tasks/"+p.TaskIDs[0], "", &tk)
		assert.Equal(t, "COMPLETED", tk.Status, "another executor (or this one restarted) reads the task")
	})

	// The plan's creation pipeline (the plan hash, ZADD, ...) reaches Redis after its retry,
	// after the plan COMPLETED. A plain HSET used to put status PENDING back, and the plan
	// could never end; create_plan.lua now writes only a plan that is not there (or a later
	// status).
	t.Run("LatePlanCreateResetsACompletedPlan", func(t *testing.T) {
		t.Parallel()
		fired := &atomic.Bool{}
		rs, _, srv := ftReproExecutor(t, ftOnceRule(regexp.MustCompile(`(?i)zadd\r\n\$\d+\r\nexecutor:plans\r\n`), ftLateFault, fired))
		p := ftReproPlan(t, srv, "late-create", "late-create", ftNoop3)
		require.True(t, fired.Load())
		first := ftReproWait(t, srv, p.PlanID, 10*time.Second)
		time.Sleep(3500 * time.Millisecond) // the held request has landed
		status, err := rs.Client().HGet(context.Background(), rediskey.New("").Plan(p.PlanID), "status").Result()
		require.NoError(t, err)
		later := ftReproWait(t, srv, p.PlanID, 3*time.Second)
		t.Logf("plan read %s first, %s after the late request; Redis holds %s", first.Status, later.Status, status)
		assert.Equal(t, "COMPLETED", status, "Redis's plan status")
		assert.Equal(t, "COMPLETED", later.Status, "the plan as the executor reads it")
	})

	// The tasks' creation pipeline (create_task.lua by EVALSHA, one key: its ARGV are field
	// names, letters only, unlike bump_fence.lua's token; plain HSET of the whole task hash,
	// fence 0, before) reaches Redis
	// after its retry, after the task COMPLETED. It used to put the task back PENDING at
	// stage 0 with fence 0 (every older run's fenced writes pass again); creation
	// (create_task.lua) now writes only a task that is not there.
	t.Run("LateTaskCreateResetsACompletedTaskAndItsFence", func(t *testing.T) {
		t.Parallel()
		fired := &atomic.Bool{}
		rs, _, srv := ftReproExecutor(t, ftOnceRule(regexp.MustCompile(`(?is)evalsha\r\n\$40\r\n[0-9a-f]{40}\r\n\$1\r\n1\r\n\$\d+\r\nexecutor:task:\{[^}]*\}\r\n\$\d+\r\n[a-z][a-zA-Z]*\r\n`), ftLateFault, fired))
		p := ftReproPlan(t, srv, "late-task-create", "late-task-create", ftNoop3)
		require.Equal(t, "COMPLETED", ftReproWait(t, srv, p.PlanID, 10*time.Second).Status)
		require.True(t, fired.Load())
		time.Sleep(3500 * time.Millisecond) // the held request has landed
		h := ftRawTask(t, rs, p.TaskIDs[0])
		t.Logf("Redis holds the task %s stage %s fence %s", h["status"], h["stage"], h["fence"])
		assert.Equal(t, "COMPLETED", h["status"], "Redis's task hash")
		assert.NotEqual(t, "0", h["fence"], "Redis's task fence")
		require.NoError(t, srv.Stop(context.Background())) // alone on its Redis: the reader comes after it
		other := servertest.With(t, server.Config{RedisURL: rs.URL(), LeaseTTL: time.Second})
		var tk wire.Task
		cfHTTP(t, http.MethodGet, other.URL()+"/v1/tenants/late-task-create/task", "", &tk)
		assert.Equal(t, "COMPLETED", tk.Status, "another executor (or this one restarted) reads the task")
	})

	// The run's first save of the plan (save_plan.lua, RUNNING, at launch) reaches Redis after
	// its retry, after the plan COMPLETED. It used to make the plan RUNNING again for good;
	// save_plan.lua now refuses a change older than the stored one (updatedAt).
	t.Run("LatePlanSaveResetsACompletedPlan", func(t *testing.T) {
		t.Parallel()
		fired := &atomic.Bool{}
		rs, _, srv := ftReproExecutor(t, ftOnceRule(regexp.MustCompile(`(?is)evalsha.*executor:plan:\{.*\r\nRUNNING\r\n`), ftLateFault, fired))
		p := ftReproPlan(t, srv, "late-plan-save", "late-plan-save", ftNoop3)
		require.True(t, fired.Load())
		first := ftReproWait(t, srv, p.PlanID, 10*time.Second)
		time.Sleep(3500 * time.Millisecond) // the held request has landed
		status, err := rs.Client().HGet(context.Background(), rediskey.New("").Plan(p.PlanID), "status").Result()
		require.NoError(t, err)
		later := ftReproWait(t, srv, p.PlanID, 2*time.Second)
		t.Logf("plan read %s first, %s after the late request; Redis holds %s", first.Status, later.Status, status)
		assert.Equal(t, "COMPLETED", status, "Redis's plan status")
		assert.Equal(t, "COMPLETED", later.Status, "the plan as the executor reads it")
	})

	// The reply to the tenant claim (SET NX of the active marker) is lost; go-redis sends the
	// pipeline again. It used to find the claim it made itself and refuse, with a 409, a tenant
	// nobody ever used (and every later submission for it, for the claim's 10 minutes); the
	// claim now reads a marker it could not set and recognises its own.
	t.Run("LostClaimReplyRejectsAFreshTenant", func(t *testing.T) {
		t.Parallel()
		fired := &atomic.Bool{}
		rs, _, srv := ftReproExecutor(t, ftOnceRule(regexp.MustCompile(`(?is)set\r\n\$\d+\r\nexecutor:active:tenant:\{fresh\}\r\n\$\d+\r\n[0-9A-Z]{26}\r\n\$2\r\nex\r\n\$\d+\r\n\d+\r\n\$2\r\nnx`),
			redistest.Fault{Kind: redistest.LoseReply}, fired))
		body := `{"name":"fresh","stages":[` + ftNoop3 + `],"tenants":[{"id":"fresh"}]}`
		status, err := cfTryHTTP(http.MethodPost, srv.URL()+"/v1/plans", body, nil)
		require.True(t, fired.Load())
		if !assert.Equal(t, http.StatusCreated, status, "first submission: %v", err) {
			marker := rediskey.New("").TenantActive("fresh")
			ttl, _ := rs.Client().TTL(context.Background(), marker).Result()
			holder, _ := rs.Client().Get(context.Background(), marker).Result()
			t.Logf("%s = %q (a task that does not exist), TTL %v", marker, holder, ttl)
			status, err = cfTryHTTP(http.MethodPost, srv.URL()+"/v1/plans", body, nil)
			assert.Equal(t, http.StatusCreated, status, "a second submission, without faults: %v", err)
		}
	})

	// The bump of the fence epoch at a run's start (bump_fence.lua) is retried after a read
	// timeout and the first request lands later. The epoch used to be bumped twice, fencing
	// out the run's own next save (the plan FAILED though nothing else touched it); a bump
	// now carries a token and a retry of it raises nothing twice.
	t.Run("LateFenceBumpFencesOutTheOwnRun", func(t *testing.T) {
		t.Parallel()
		fired := &atomic.Bool{}
		_, _, srv := ftReproExecutor(t, ftOnceRule(
			ftBumpFence, ftLateFault, fired))
		p := ftReproPlan(t, srv, "late-bump", "late-bump",
			`{"name":"one","kind":"noop"},{"name":"two","kind":"sleep","params":{"duration":"4s"}},{"name":"three","kind":"noop"}`)
		end := ftReproWait(t, srv, p.PlanID, 15*time.Second)
		require.True(t, fired.Load())
		var tk wire.Task
		cfHTTP(t, http.MethodGet, srv.URL()+"/v1/tasks/"+p.TaskIDs[0], "", &tk)
		b, _ := json.Marshal(tk.LastError)
		t.Logf("plan %s; task %s attempt %d stage %d lastError %s", end.Status, tk.Status, tk.Attempt, tk.CurrentStage, b)
		assert.Equal(t, "COMPLETED", end.Status)
	})

	// The same double bump, landing between a run's bump and its first save (held too, so
	// that its retry comes after the late bump): start()'s save used to be refused as fenced,
	// the run ended "task not started", and the task was left PENDING for good. A bump now
	// carries a token: a retried bump raises nothing twice.
	//
	// The path needs go-redis's retry of the bump (after its 1 s read timeout) to win over
	// the run's own 1 s bound on the wait: when the bound wins (a loaded machine), the store
	// goes degraded, the run starts on memory, and the held save is never sent. Every attempt
	// must complete the plan; one of at most three must have taken the path.
	t.Run("LateFenceBumpLeavesATaskPendingForever", func(t *testing.T) {
		t.Parallel()
		for attempt := 1; ; attempt++ {
			if ftLateBumpBeforeStart(t, attempt) {
				return
			}
			require.Less(t, attempt, 3, "in %d attempts the retried bump never went before the run's start", attempt)
		}
	})

	// A read of the plan from Redis (HMGET of its status) is answered slowly, though within
	// the client timeout. Meanwhile Redis becomes unreachable, the task completes and the
	// plan is settled COMPLETED on memory (journaled). The slow answer (RUNNING) used to be
	// put into the mirror over the journaled COMPLETED plan, and written back; plan reads no
	// longer touch a mirror copy.
	t.Run("SlowPlanReadClobbersAJournaledPlan", func(t *testing.T) {
		t.Parallel()
		kind := newCFHoldKind()
		var phase atomic.Int32 // 0 pass; 1 hold the plan read, then drop everything; 2 pass
		var held atomic.Bool
		var read *regexp.Regexp
		rule := func(chunk []byte) redistest.Fault {
			switch {
			case phase.Load() != 1:
				return redistest.Fault{}
			case !held.Load() && read.Match(chunk):
				held.Store(true)
				return redistest.Fault{Kind: redistest.Delay, Hold: 600 * time.Millisecond, Late: true} // within the 1 s timeout
			case held.Load():
				return redistest.Fault{Kind: redistest.Drop}
			}
			return redistest.Fault{}
		}
		rs, _, srv := ftReproExecutor(t, rule, kind.register)
		p := ftReproPlan(t, srv, "slow-read", "slow-read", `{"name":"one","kind":"noop"},{"name":"hold","kind":"hold"}`)
		read = regexp.MustCompile(`(?is)hmget.*executor:plan:\{` + p.PlanID + `\}`)
		select {
		case <-kind.entered:
		case <-time.After(10 * time.Second):
			t.Fatal("the run did not reach the hold stage")
		}
		phase.Store(1)
		got := make(chan wire.Plan, 1)
		go func() {
			var v wire.Plan
			_, _ = cfTryHTTP(http.MethodGet, srv.URL()+"/v1/plans/"+p.PlanID, "", &v)
			got <- v
		}()
		require.Eventually(t, held.Load, 5*time.Second, 5*time.Millisecond, "the plan read is held")
		close(kind.release) // the task completes now, on memory: every other request is dropped
		require.Eventually(t, func() bool { return cfReadyz(srv).Redis == "degraded" }, 5*time.Second, 5*time.Millisecond)
		slow := <-got
		phase.Store(2)
		require.Eventually(t, func() bool { return cfReadyz(srv).Redis == "ok" }, 15*time.Second, 20*time.Millisecond)
		status, err := rs.Client().HGet(context.Background(), rediskey.New("").Plan(p.PlanID), "status").Result()
		require.NoError(t, err)
		end := ftReproWait(t, srv, p.PlanID, 3*time.Second)
		var tk wire.Task
		cfHTTP(t, http.MethodGet, srv.URL()+"/v1/tasks/"+p.TaskIDs[0], "", &tk)
		t.Logf("slow read answered %s; after the write-back Redis holds %s, the API reads %s, its task %s",
			slow.Status, status, end.Status, tk.Status)
		assert.Equal(t, "COMPLETED", status, "Redis's plan status")
		assert.Equal(t, "COMPLETED", end.Status, "the plan as the executor reads it")
	})
}

// ftLateBumpBeforeStart is one attempt of LateFenceBumpLeavesATaskPendingForever: a plan of
// one tenant whose fence bump lands late, after its retry, and whose start's save is held. It
// asserts that the plan completes, and says whether the held save was sent (the path taken).
func ftLateBumpBeforeStart(t *testing.T, attempt int) bool {
	t.Helper()
	bump, bumped := ftBumpFence, &atomic.Bool{}
	save, saved := regexp.MustCompile(`(?is)executor:ckpt:\{.*\r\nstatus\r\n\$7\r\nRUNNING\r\n`), &atomic.Bool{}
	// The bump lands 1.3 s after it was sent: after its retry (1 s), before the retry of the
	// save that follows it (held 3 s, retried 1 s after it was sent).
	first := ftOnceRule(bump, redistest.Fault{Kind: redistest.Delay, Late: true, Hold: 1300 * time.Millisecond}, bumped)
	second := ftOnceRule(save, ftLateFault, saved)
	_, _, srv := ftReproExecutor(t, func(chunk []byte) redistest.Fault {
		if f := first(chunk); f.Kind != redistest.Pass {
			return f
		}
		return second(chunk)
	})
	name := "late-bump-start-" + strconv.Itoa(attempt)
	p := ftReproPlan(t, srv, name, name, ftNoop3)
	end := ftReproWait(t, srv, p.PlanID, 8*time.Second)
	require.True(t, bumped.Load())
	var tk wire.Task
	cfHTTP(t, http.MethodGet, srv.URL()+"/v1/tasks/"+p.TaskIDs[0], "", &tk)
	t.Logf("attempt %d: the held save sent: %v; plan %s after 8s; task %s attempt %d stage %d",
		attempt, saved.Load(), end.Status, tk.Status, tk.Attempt, tk.CurrentStage)
	assert.Equal(t, "COMPLETED", end.Status)
	return saved.Load()
}

// ftDump logs the lines of logs that tell of a lost compare-and-set: a run's write that lost
// to another writer, a write-back refused, a stage completed out of order.
func ftDump(t *testing.T, logs *servertest.Buffer) {
	t.Helper()
	for _, line := range strings.Split(logs.String(), "\n") {
		for _, mark := range []string{"write lost", "write-back refused", "conflict on write-back", "out of order"} {
			if strings.Contains(line, mark) {
				t.Log(line)
				break
			}
		}
	}
}
