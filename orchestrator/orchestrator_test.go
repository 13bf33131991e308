package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/domain/lease"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/orchestrator"
)

// gauge measures how many callers are inside a section at once.
type gauge struct {
	cur, peak atomic.Int64
	calls     atomic.Int64
}

func (g *gauge) enter() {
	g.calls.Add(1)
	n := g.cur.Add(1)
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

func (g *gauge) leave() { g.cur.Add(-1) }

func TestMaxConcurrencyBoundsTasksInsideStages(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 64)
	var g gauge
	h.register(t, "measured", func(ctx context.Context, _ stage.Request) (json.RawMessage, error) {
		g.enter()
		defer g.leave()
		time.Sleep(2 * time.Millisecond)
		return nil, nil
	})
	p := h.submit(t, app.SubmitRequest{
		Name: "bounded", MaxConcurrency: 4, Tenants: tenants("mc", 50),
		Stages: stages("measured", "push", "restart", "health"),
	})
	v := h.wait(t, p.ID())

	assert.Equal(t, plan.Completed, v.Plan.Status())
	assert.Equal(t, 50, v.Progress.Counts[task.Completed])
	assert.EqualValues(t, 150, g.calls.Load())
	assert.LessOrEqual(t, g.peak.Load(), int64(4))
	assert.Greater(t, g.peak.Load(), int64(1), "tasks ran concurrently at all")
}

func TestGlobalWorkerCapBoundsAllPlans(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 3)
	var g gauge
	h.register(t, "measured", func(ctx context.Context, _ stage.Request) (json.RawMessage, error) {
		g.enter()
		defer g.leave()
		time.Sleep(2 * time.Millisecond)
		return nil, nil
	})
	var ids []string
	for _, prefix := range []string{"ga", "gb", "gc"} {
		ids = append(ids, h.submit(t, app.SubmitRequest{
			MaxConcurrency: 10, Tenants: tenants(prefix, 10), Stages: stages("measured", "one", "two"),
		}).ID())
	}
	for _, id := range ids {
		assert.Equal(t, plan.Completed, h.wait(t, id).Plan.Status())
	}
	assert.LessOrEqual(t, g.peak.Load(), int64(3))
	assert.EqualValues(t, 60, g.calls.Load())
}

func TestRetryableFailuresAreRetriedAndLedgered(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	var calls atomic.Int64
	h.register(t, "flaky", func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
		if calls.Add(1) <= 2 {
			return nil, stage.Retryable(errors.New("connection reset"))
		}
		return json.RawMessage(`{"ok":true}`), nil
	})
	p := h.submit(t, app.SubmitRequest{
		Tenants: tenants("rt", 1),
		Stages: []stage.Spec{{Name: "push", Kind: "flaky", Retry: stage.Policy{
			MaxAttempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, Jitter: stage.JitterNone,
		}}},
	})
	v := h.wait(t, p.ID())
	require.Equal(t, plan.Completed, v.Plan.Status())

	tk := h.tenantTask(t, "rt-000")
	ledger := tk.Ledger()
	require.Len(t, ledger, 3)
	for i, a := range ledger {
		assert.Equal(t, i+1, a.Attempt, "attempt numbers")
		assert.Equal(t, "push", a.Stage)
	}
	assert.Equal(t, task.OutcomeFailed, ledger[0].Outcome)
	assert.Equal(t, stage.ClassRetryable, ledger[0].Class)
	assert.Equal(t, time.Millisecond, ledger[0].Backoff, "no jitter: initial backoff")
	assert.Equal(t, 2*time.Millisecond, ledger[1].Backoff, "doubled")
	assert.Equal(t, task.OutcomeSucceeded, ledger[2].Outcome)

	cp, err := h.svc.TenantCheckpoint(context.Background(), "rt-000")
	require.NoError(t, err)
	out, ok := cp.Output("push")
	require.True(t, ok)
	assert.JSONEq(t, `{"ok":true}`, string(out))
}

func TestRetryAfterHintWinsOverPolicy(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	var calls atomic.Int64
	h.register(t, "throttled", func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
		if calls.Add(1) == 1 {
			return nil, &stage.Error{Class: stage.ClassRetryable, Code: 429, Message: "slow down", RetryAfter: 30 * time.Millisecond}
		}
		return nil, nil
	})
	p := h.submit(t, app.SubmitRequest{
		Tenants: tenants("ra", 1),
		Stages: []stage.Spec{{Name: "push", Kind: "throttled", Retry: stage.Policy{
			MaxAttempts: 2, InitialBackoff: time.Millisecond, Jitter: stage.JitterNone,
		}}},
	})
	require.Equal(t, plan.Completed, h.wait(t, p.ID()).Plan.Status())
	ledger := h.tenantTask(t, "ra-000").Ledger()
	require.Len(t, ledger, 2)
	assert.Equal(t, 30*time.Millisecond, ledger[0].Backoff)
	assert.Equal(t, 429, ledger[0].Code)
	assert.GreaterOrEqual(t, ledger[1].StartedAt.Sub(ledger[0].EndedAt), 30*time.Millisecond)
}

func TestPermanentErrorFailsWithoutRetry(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	var calls atomic.Int64
	h.register(t, "broken", func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
		calls.Add(1)
		return nil, &stage.Error{Class: stage.ClassPermanent, Code: 400, Message: "bad config"}
	})
	p := h.submit(t, app.SubmitRequest{
		Tenants: tenants("pe", 1),
		Stages: []stage.Spec{
			{Name: "validate", Kind: "noop"},
			{Name: "push", Kind: "broken", Retry: stage.Policy{MaxAttempts: 5, InitialBackoff: time.Millisecond}},
			{Name: "never", Kind: "noop"},
		},
	})
	v := h.wait(t, p.ID())
	assert.Equal(t, plan.Failed, v.Plan.Status())
	assert.EqualValues(t, 1, calls.Load())

	tk := h.tenantTask(t, "pe-000")
	assert.Equal(t, task.Failed, tk.Status())
	require.NotNil(t, tk.LastError())
	assert.Equal(t, stage.ClassPermanent, tk.LastError().Class)
	assert.Equal(t, "push", tk.LastError().Stage)
	assert.Equal(t, 400, tk.LastError().Code)
	assert.Equal(t, 1, tk.CurrentStage(), "stopped at the failing stage")
	assert.Len(t, tk.Ledger(), 2)
}

func TestStageTimeoutIsClassifiedAndRetried(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	var calls atomic.Int64
	h.register(t, "hangs", func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
		calls.Add(1)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	p := h.submit(t, app.SubmitRequest{
		Tenants: tenants("to", 1),
		Stages: []stage.Spec{{Name: "push", Kind: "hangs", Timeout: 20 * time.Millisecond,
			Retry: stage.Policy{MaxAttempts: 2, InitialBackoff: time.Millisecond}}},
	})
	assert.Equal(t, plan.Failed, h.wait(t, p.ID()).Plan.Status())
	assert.EqualValues(t, 2, calls.Load(), "a timeout is retried")
	tk := h.tenantTask(t, "to-000")
	require.NotNil(t, tk.LastError())
	assert.Equal(t, stage.ClassTimeout, tk.LastError().Class)
}

func TestFailureBudgetStopsNewStarts(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	var started atomic.Int64
	h.register(t, "fails", func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
		started.Add(1)
		return nil, stage.Permanent(errors.New("nope"))
	})
	p := h.submit(t, app.SubmitRequest{
		MaxConcurrency: 1, FailureBudget: 1, Tenants: tenants("fb", 10),
		Stages: stages("fails", "push"),
	})
	v := h.wait(t, p.ID())
	assert.Equal(t, plan.Failed, v.Plan.Status())
	assert.EqualValues(t, 1, started.Load(), "no task starts after the first failure")
	assert.Equal(t, 1, v.Progress.Counts[task.Failed])
	assert.Equal(t, 9, v.Progress.Counts[task.Cancelled], "the rest never start and end CANCELLED")
	tk := h.tenantTask(t, "fb-005")
	require.NotNil(t, tk.LastError())
	assert.Equal(t, stage.ClassCancelled, tk.LastError().Class)
}

func TestPauseAtBoundaryAndResumeAtNextStage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	var mu sync.Mutex
	runs := map[string]int{}
	gate := make(chan struct{})
	h.register(t, "counted", func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
		mu.Lock()
		runs[req.Stage]++
		mu.Unlock()
		if req.Stage == "one" {
			<-gate // hold stage one until the pause is requested
		}
		return nil, nil
	})
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("pa", 1), Stages: stages("counted", "one", "two", "three")})
	eventually(t, "stage one running", func() bool { mu.Lock(); defer mu.Unlock(); return runs["one"] == 1 })

	v, err := h.svc.PausePlan(context.Background(), p.ID())
	require.NoError(t, err)
	assert.Equal(t, plan.Paused, v.Plan.Status())
	assert.True(t, h.tenantTask(t, "pa-000").PauseRequested())
	close(gate)
	eventually(t, "task paused", func() bool { return h.tenantStatus(t, "pa-000") == task.Paused })
	tk := h.tenantTask(t, "pa-000")
	assert.Equal(t, 1, tk.CurrentStage(), "paused after stage one, before stage two")
	mu.Lock()
	assert.Equal(t, map[string]int{"one": 1}, runs)
	mu.Unlock()

	_, err = h.svc.ResumePlan(context.Background(), p.ID(), false)
	require.NoError(t, err)
	assert.Equal(t, plan.Completed, h.wait(t, p.ID()).Plan.Status())
	mu.Lock()
	assert.Equal(t, map[string]int{"one": 1, "two": 1, "three": 1}, runs, "completed stages are not re-run")
	mu.Unlock()
	assert.Equal(t, 1, h.tenantTask(t, "pa-000").Attempt(), "resume is not a retry")
}

func TestTenantPauseAndResume(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	gate := make(chan struct{})
	h.register(t, "gated", func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
		if req.Stage == "one" {
			<-gate
		}
		return nil, nil
	})
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("tp", 2), Stages: stages("gated", "one", "two")})
	eventually(t, "running", func() bool { return h.tenantStatus(t, "tp-000") == task.Running })
	_, err := h.svc.PauseTenant(context.Background(), "tp-000")
	require.NoError(t, err)
	close(gate)
	eventually(t, "paused", func() bool { return h.tenantStatus(t, "tp-000") == task.Paused })
	eventually(t, "other tenant done", func() bool { return h.tenantStatus(t, "tp-001") == task.Completed })
	v, err := h.svc.Plan(context.Background(), p.ID())
	require.NoError(t, err)
	assert.Equal(t, plan.Running, v.Plan.Status(), "a paused tenant keeps its plan open")

	_, err = h.svc.ResumeTenant(context.Background(), "tp-000")
	require.NoError(t, err)
	assert.Equal(t, plan.Completed, h.wait(t, p.ID()).Plan.Status())
}

func TestCancelStopsRunningSleepQuickly(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	p := h.submit(t, app.SubmitRequest{
		Tenants: tenants("cs", 1),
		Stages:  []stage.Spec{{Name: "bake", Kind: "sleep", Params: map[string]any{"duration": "10s"}}},
	})
	eventually(t, "sleeping", func() bool { return h.tenantStatus(t, "cs-000") == task.Running })
	time.Sleep(20 * time.Millisecond) // inside the sleep handler

	start := time.Now()
	v, err := h.svc.CancelTenant(context.Background(), "cs-000")
	elapsed := time.Since(start)
	require.NoError(t, err)
	assert.Equal(t, task.Cancelled, v.Task.Status(), "cancel returns once the run recorded it")
	assert.Less(t, elapsed, 100*time.Millisecond)
	require.NotNil(t, v.Task.LastError())
	assert.Equal(t, stage.ClassCancelled, v.Task.LastError().Class)
	assert.Equal(t, plan.Cancelled, h.wait(t, p.ID()).Plan.Status(), "a plan whose only task was cancelled ends CANCELLED")
}

func TestCancelPlanEndsEveryTask(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	p := h.submit(t, app.SubmitRequest{
		MaxConcurrency: 2, Tenants: tenants("cp", 6),
		Stages: []stage.Spec{{Name: "bake", Kind: "sleep", Params: map[string]any{"duration": "10s"}}},
	})
	eventually(t, "two running", func() bool { return h.tenantStatus(t, "cp-001") == task.Running })
	v, err := h.svc.CancelPlan(context.Background(), p.ID())
	require.NoError(t, err)
	assert.Equal(t, plan.Cancelled, v.Plan.Status())
	assert.Equal(t, 6, v.Progress.Counts[task.Cancelled], "no task is still running once the plan is CANCELLED")
}

func TestRetryFromCheckpointAndFromStart(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	var mu sync.Mutex
	runs := map[string]int{}
	var fixed atomic.Bool
	h.register(t, "target", func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
		mu.Lock()
		runs[req.Stage]++
		mu.Unlock()
		if req.Stage == "three" && !fixed.Load() {
			return nil, stage.Permanent(errors.New("config rejected"))
		}
		return json.RawMessage(`{"stage":"` + req.Stage + `"}`), nil
	})
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("rc", 1), Stages: stages("target", "one", "two", "three", "four")})
	assert.Equal(t, plan.Failed, h.wait(t, p.ID()).Plan.Status())
	cp, err := h.svc.TenantCheckpoint(context.Background(), "rc-000")
	require.NoError(t, err)
	assert.Equal(t, 1, cp.LastCompletedStageIndex())

	fixed.Store(true)
	v, err := h.svc.RetryTenant(context.Background(), "rc-000", true)
	require.NoError(t, err)
	assert.Equal(t, 2, v.Task.Attempt())
	assert.Equal(t, plan.Completed, h.wait(t, p.ID()).Plan.Status(), "the reopened plan completes")
	mu.Lock()
	assert.Equal(t, map[string]int{"one": 1, "two": 1, "three": 2, "four": 1}, runs)
	mu.Unlock()

	// A completed task cannot be retried.
	_, err = h.svc.RetryTenant(context.Background(), "rc-000", false)
	require.ErrorIs(t, err, task.ErrInvalidTransition)
}

func TestRetryFromStartRerunsEveryStage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	var mu sync.Mutex
	runs := map[string]int{}
	h.register(t, "target", func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
		mu.Lock()
		defer mu.Unlock()
		runs[req.Stage]++
		if req.Stage == "two" && runs["two"] == 1 {
			return nil, stage.Permanent(errors.New("first time fails"))
		}
		return nil, nil
	})
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("rs", 1), Stages: stages("target", "one", "two")})
	assert.Equal(t, plan.Failed, h.wait(t, p.ID()).Plan.Status())
	_, err := h.svc.RetryTenant(context.Background(), "rs-000", false)
	require.NoError(t, err)
	assert.Equal(t, plan.Completed, h.wait(t, p.ID()).Plan.Status())
	mu.Lock()
	assert.Equal(t, map[string]int{"one": 2, "two": 2}, runs)
	mu.Unlock()
	cp, err := h.svc.TenantCheckpoint(context.Background(), "rs-000")
	require.NoError(t, err)
	assert.Equal(t, []string{"one", "two"}, cp.CompletedStages())
}

func TestLaterStagesSeeEarlierOutputs(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	got := make(chan map[string]any, 1)
	h.register(t, "emit", func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
		return json.RawMessage(`{"host":"` + req.TenantID + `.internal"}`), nil
	})
	h.register(t, "use", func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
		got <- req.Params
		return nil, nil
	})
	p := h.submit(t, app.SubmitRequest{
		Tenants: []app.TenantInput{{ID: "out-1", Params: map[string]any{"version": "1.2.3"}}},
		Stages: []stage.Spec{
			{Name: "push", Kind: "emit"},
			{Name: "health", Kind: "use", Params: map[string]any{
				"url": `http://{{index .Outputs "push" "host"}}/health?v={{.Params.version}}&run={{.Attempt}}`,
			}},
		},
	})
	assert.Equal(t, plan.Completed, h.wait(t, p.ID()).Plan.Status())
	assert.Equal(t, "http://out-1.internal/health?v=1.2.3&run=1", (<-got)["url"])
}

func TestTenantLockedFailsTheTask(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	held, err := h.locker.Acquire(context.Background(), "locked-1", "other-instance")
	require.NoError(t, err)
	defer func() { _ = held.Release(context.Background()) }()

	p := h.submit(t, app.SubmitRequest{Tenants: []app.TenantInput{{ID: "locked-1"}}, Stages: stages("noop", "one")})
	assert.Equal(t, plan.Failed, h.wait(t, p.ID()).Plan.Status())
	tk := h.tenantTask(t, "locked-1")
	require.NotNil(t, tk.LastError())
	assert.Equal(t, stage.ClassTenantLocked, tk.LastError().Class)
}

func TestStopInterruptsRunningTasksKeepingCheckpoints(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	p := h.submit(t, app.SubmitRequest{
		Tenants: tenants("st", 1),
		Stages: []stage.Spec{
			{Name: "one", Kind: "noop"},
			{Name: "bake", Kind: "sleep", Params: map[string]any{"duration": "10s"}},
		},
	})
	eventually(t, "baking", func() bool { return h.tenantTask(t, "st-000").CurrentStage() == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, h.orch.Stop(ctx))

	tk := h.tenantTask(t, "st-000")
	assert.Equal(t, task.Interrupted, tk.Status())
	cp, err := h.svc.TenantCheckpoint(context.Background(), "st-000")
	require.NoError(t, err)
	assert.Equal(t, 0, cp.LastCompletedStageIndex())
	v, err := h.svc.Plan(context.Background(), p.ID())
	require.NoError(t, err)
	assert.Equal(t, plan.Running, v.Plan.Status(), "nothing resumes or settles by itself after a stop")
}

func TestTemplateReadingAMissingOutputKeyFailsTheStage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	var called atomic.Bool
	h.register(t, "use", func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
		called.Store(true)
		return nil, nil
	})
	p := h.submit(t, app.SubmitRequest{
		Tenants: tenants("nul", 1),
		Stages: []stage.Spec{
			{Name: "a", Kind: "noop"},
			{Name: "b", Kind: "use", Params: map[string]any{"x": `[{{index .Outputs "a" "k"}}]`}},
		},
	})
	assert.Equal(t, plan.Failed, h.wait(t, p.ID()).Plan.Status())
	assert.False(t, called.Load(), "the stage never runs with a hole in its params")
	tk := h.tenantTask(t, "nul-000")
	require.NotNil(t, tk.LastError())
	assert.Equal(t, stage.ClassPermanent, tk.LastError().Class)
	assert.Equal(t, "b", tk.LastError().Stage)
	assert.Equal(t, `params.x: stage "a" has no output key "k"`, tk.LastError().Message)
}

// stallingLocker blocks Acquire until its context ends, telling entered when a run is waiting.
type stallingLocker struct {
	*lock.Memory
	entered chan string
}

func (l stallingLocker) Acquire(ctx context.Context, tenantID, _ string) (lease.Lease, error) {
	l.entered <- tenantID
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestCancelPlanReachesARunBeforeItsTaskStarts(t *testing.T) {
	t.Parallel()
	db := memrepo.New()
	locker := stallingLocker{Memory: lock.NewMemory(), entered: make(chan string, 1)}
	svc, _ := apptest.New(t, apptest.Stores{
		Creator: db, Plans: db.Plans(), Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Locker: locker,
	}, nil, orchestrator.Config{Workers: 2})
	sub, err := svc.Submit(context.Background(), app.SubmitRequest{Tenants: tenants("cb", 1), Stages: stages("noop", "one")})
	require.NoError(t, err)
	select {
	case <-locker.entered: // the run has claimed the task and waits for the tenant's lease
	case <-time.After(10 * time.Second):
		t.Fatal("no run asked for the lease")
	}

	v, err := svc.CancelPlan(context.Background(), sub.Plan.Plan.ID())
	require.NoError(t, err)
	assert.Equal(t, plan.Cancelled, v.Plan.Status())
	assert.Equal(t, 1, v.Progress.Counts[task.Cancelled], "the claimed but unstarted task is cancelled, not left PENDING")
}

// A worker goes on with its plan's next task when its run ends (Queue.DoneClaim), but a plan
// submitted later still gets its turn long before the first one ends: the chains stop while
// another plan has work.
func TestALaterPlanIsNotStarvedByAnEarlierOne(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	h.register(t, "slow", func(ctx context.Context, _ stage.Request) (json.RawMessage, error) {
		time.Sleep(10 * time.Millisecond)
		return nil, nil
	})
	long := h.submit(t, app.SubmitRequest{MaxConcurrency: 2, Tenants: tenants("long", 600), Stages: stages("slow", "one")})
	eventually(t, "the long plan runs", func() bool {
		return h.tenantStatus(t, "long-000") == task.Completed
	})
	short := h.submit(t, app.SubmitRequest{MaxConcurrency: 2, Tenants: tenants("short", 4), Stages: stages("slow", "one")})
	assert.Equal(t, plan.Completed, h.wait(t, short.ID()).Plan.Status())
	v, err := h.svc.Plan(context.Background(), long.ID())
	require.NoError(t, err)
	assert.Equal(t, plan.Running, v.Plan.Status(), "the later plan ended first (600 × 10 ms on 2 workers take 3 s)")
	assert.Equal(t, plan.Completed, h.wait(t, long.ID()).Plan.Status())
}
