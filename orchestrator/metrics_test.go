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
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/orchestrator"
	"github.com/executor-dev/executor/stagekind"
)

// recordingMetrics records what the orchestrator reports.
type recordingMetrics struct {
	mu        sync.Mutex
	stages    map[string]int // "kind/outcome" -> attempts
	retries   map[string]int // kind -> retried attempts
	fenced    int
	contended int
	lost      int
	rollbacks map[string]int // trigger -> rollbacks started
}

func newRecordingMetrics() *recordingMetrics {
	return &recordingMetrics{stages: map[string]int{}, retries: map[string]int{}, rollbacks: map[string]int{}}
}

func (m *recordingMetrics) StageDone(kind, outcome string, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d < 0 {
		panic("negative stage duration")
	}
	m.stages[kind+"/"+outcome]++
}

func (m *recordingMetrics) StageRetried(kind string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.retries[kind]++
}

func (m *recordingMetrics) Fenced()                      { m.mu.Lock(); m.fenced++; m.mu.Unlock() }
func (m *recordingMetrics) LeaseContended()              { m.mu.Lock(); m.contended++; m.mu.Unlock() }
func (m *recordingMetrics) LeaseLost()                   { m.mu.Lock(); m.lost++; m.mu.Unlock() }
func (m *recordingMetrics) ScheduledStart(time.Duration) {}
func (m *recordingMetrics) RollbackStarted(trigger string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rollbacks[trigger]++
}

// snapshot returns copies of the counts.
func (m *recordingMetrics) snapshot() (stages, retries map[string]int, fenced, contended int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	stages, retries = map[string]int{}, map[string]int{}
	for k, v := range m.stages {
		stages[k] = v
	}
	for k, v := range m.retries {
		retries[k] = v
	}
	return stages, retries, m.fenced, m.contended
}

// newMeasuredHarness is newHarness with rec as the orchestrator's Metrics.
func newMeasuredHarness(t *testing.T, rec *recordingMetrics) *harness {
	t.Helper()
	db := memrepo.New()
	locker := lock.NewMemory()
	kinds := stagekind.Builtin(stagekind.HTTPOptions{})
	svc, orch := apptest.New(t, apptest.Stores{
		Creator: db, Plans: db.Plans(), Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Locker: locker,
	}, kinds, orchestrator.Config{Workers: 8, Rand: func() float64 { return 0 }, Metrics: rec})
	return &harness{svc: svc, orch: orch, kinds: kinds, locker: locker, db: db}
}

func TestMetricsSeeEveryStageAttempt(t *testing.T) {
	t.Parallel()
	rec := newRecordingMetrics()
	h := newMeasuredHarness(t, rec)
	var calls sync.Map // tenant -> *atomic.Int32
	h.register(t, "flaky", func(_ context.Context, req stage.Request) (json.RawMessage, error) {
		n, _ := calls.LoadOrStore(req.TenantID, new(atomic.Int32))
		if n.(*atomic.Int32).Add(1) == 1 {
			return nil, stage.Retryable(errors.New("first call fails"))
		}
		return nil, nil
	})
	h.register(t, "broken", func(context.Context, stage.Request) (json.RawMessage, error) {
		return nil, stage.Permanent(errors.New("never works"))
	})
	retry := stage.Policy{MaxAttempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond, Multiplier: 1}

	ok := h.submit(t, app.SubmitRequest{Tenants: tenants("flaky", 3), Stages: []stage.Spec{
		{Name: "push", Kind: "flaky", Retry: retry},
		{Name: "done", Kind: "noop"},
	}})
	require.Equal(t, plan.Completed, h.wait(t, ok.ID()).Plan.Status())
	bad := h.submit(t, app.SubmitRequest{Tenants: tenants("broken", 2), Stages: []stage.Spec{
		{Name: "push", Kind: "broken", Retry: retry},
	}})
	require.Equal(t, plan.Failed, h.wait(t, bad.ID()).Plan.Status())

	stages, retries, _, _ := rec.snapshot()
	assert.Equal(t, map[string]int{
		"flaky/retryable": 3, "flaky/ok": 3, "noop/ok": 3, "broken/permanent": 2,
	}, stages)
	assert.Equal(t, map[string]int{"flaky": 3}, retries, "a permanent failure is not retried")
}

func TestMetricsCountLeaseContention(t *testing.T) {
	t.Parallel()
	rec := newRecordingMetrics()
	h := newMeasuredHarness(t, rec)
	held, err := h.locker.Acquire(context.Background(), "locked-1", "other-instance")
	require.NoError(t, err)
	defer func() { _ = held.Release(context.Background()) }()

	p := h.submit(t, app.SubmitRequest{Tenants: []app.TenantInput{{ID: "locked-1"}}, Stages: stages("noop", "one")})
	require.Equal(t, plan.Failed, h.wait(t, p.ID()).Plan.Status())
	stages, _, _, contended := rec.snapshot()
	assert.Equal(t, 1, contended)
	assert.Empty(t, stages, "no stage ran")
}

// A newer run takes the task (its fence epoch is bumped) while this run's stage runs: the
// run's next write is refused, and counted.
func TestMetricsCountFencedWrites(t *testing.T) {
	t.Parallel()
	rec := newRecordingMetrics()
	h := newMeasuredHarness(t, rec)
	entered, release := make(chan string, 1), make(chan struct{})
	h.register(t, "hold", func(_ context.Context, req stage.Request) (json.RawMessage, error) {
		entered <- req.TaskID
		<-release
		return nil, nil
	})
	h.submit(t, app.SubmitRequest{Tenants: tenants("fence", 1), Stages: stages("hold", "one", "two")})
	id := <-entered
	_, err := h.db.Tasks().BumpFence(context.Background(), id)
	require.NoError(t, err)
	close(release)

	eventually(t, "the refused write counted", func() bool {
		_, _, fenced, _ := rec.snapshot()
		return fenced >= 1
	})
	tk, err := h.db.Tasks().Task(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, task.Running, tk.Status(), "the stale run changed nothing")
	assert.Zero(t, tk.CurrentStage(), "the stale run changed nothing")
}
