package metrics_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/metrics"
	"github.com/executor-dev/executor/orchestrator"
)

// The Registry is the orchestrator's Metrics (server passes it as orchestrator.Config.Metrics).
var _ orchestrator.Metrics = (*metrics.Registry)(nil)

// find returns the metric of family name whose labels include labels, or nil.
func find(t *testing.T, r *metrics.Registry, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	families, err := r.Gatherer().Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metric:
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue metric
				}
			}
			return m
		}
	}
	return nil
}

// value returns the value of a counter or gauge, or the sample count of a histogram; it
// fails the test when there is no such series.
func value(t *testing.T, r *metrics.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	m := find(t, r, name, labels)
	require.NotNil(t, m, "no series %s%v", name, labels)
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	require.Fail(t, "unexpected metric type", name)
	return 0
}

func TestHooksMoveTheirMetric(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		call   func(r *metrics.Registry)
		metric string
		labels map[string]string
	}{
		{"stage done ok", func(r *metrics.Registry) { r.StageDone("http", "ok", 20*time.Millisecond) },
			"executor_stage_duration_seconds", map[string]string{"kind": "http", "outcome": "ok"}},
		{"stage done failed", func(r *metrics.Registry) { r.StageDone("sleep", "timeout", time.Second) },
			"executor_stage_duration_seconds", map[string]string{"kind": "sleep", "outcome": "timeout"}},
		{"stage retried", func(r *metrics.Registry) { r.StageRetried("http") },
			"executor_stage_retries_total", map[string]string{"kind": "http"}},
		{"fenced", (*metrics.Registry).Fenced, "executor_fenced_writes_total", nil},
		{"lease contended", (*metrics.Registry).LeaseContended, "executor_lease_contention_total", nil},
		{"lease lost", (*metrics.Registry).LeaseLost, "executor_lease_lost_total", nil},
		{"scheduled start", func(r *metrics.Registry) { r.ScheduledStart(3 * time.Millisecond) },
			"executor_scheduled_start_lateness_seconds", nil},
		{"http request", func(r *metrics.Registry) { r.ObserveRequest("/v1/plans/{planId}", "GET", 200, time.Millisecond) },
			"executor_http_request_duration_seconds", map[string]string{"route": "/v1/plans/{planId}", "method": "GET", "code": "200"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := metrics.New(metrics.Options{})
			tt.call(r)
			assert.Equal(t, 1.0, value(t, r, tt.metric, tt.labels))
			tt.call(r)
			assert.Equal(t, 2.0, value(t, r, tt.metric, tt.labels))
		})
	}
}

func TestCountersStartAtZero(t *testing.T) {
	t.Parallel()
	r := metrics.New(metrics.Options{})
	for _, name := range []string{"executor_fenced_writes_total", "executor_lease_contention_total",
		"executor_lease_lost_total", "executor_redis_degraded", "executor_journal_length"} {
		assert.Zero(t, value(t, r, name, nil), name)
	}
}

func TestStageDurationIsInSeconds(t *testing.T) {
	t.Parallel()
	r := metrics.New(metrics.Options{})
	r.StageDone("noop", "ok", 1500*time.Millisecond)
	m := find(t, r, "executor_stage_duration_seconds", map[string]string{"kind": "noop", "outcome": "ok"})
	require.NotNil(t, m)
	assert.InDelta(t, 1.5, m.GetHistogram().GetSampleSum(), 1e-9)
}

func TestStatusCollectorReportsEveryStatus(t *testing.T) {
	t.Parallel()
	r := metrics.New(metrics.Options{StatusCounts: func() (map[plan.Status]int, map[task.Status]int) {
		return map[plan.Status]int{plan.Running: 2}, map[task.Status]int{task.Completed: 5, task.Failed: 1}
	}})
	for _, s := range plan.Statuses {
		want := 0.0
		if s == plan.Running {
			want = 2
		}
		assert.Equal(t, want, value(t, r, "executor_plans", map[string]string{"status": string(s)}), s)
	}
	want := map[task.Status]float64{task.Completed: 5, task.Failed: 1}
	for _, s := range task.Statuses {
		assert.Equal(t, want[s], value(t, r, "executor_tasks", map[string]string{"status": string(s)}), s)
	}
}

func TestStatusCountsAreReadAtScrapeTime(t *testing.T) {
	t.Parallel()
	n := 0
	r := metrics.New(metrics.Options{StatusCounts: func() (map[plan.Status]int, map[task.Status]int) {
		n++
		return nil, map[task.Status]int{task.Running: n}
	}})
	assert.Equal(t, 1.0, value(t, r, "executor_tasks", map[string]string{"status": "RUNNING"}))
	assert.Equal(t, 2.0, value(t, r, "executor_tasks", map[string]string{"status": "RUNNING"}))
}

func TestDegradedAndJournalGauges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		degraded     bool
		journal      int
		wantDegraded float64
	}{
		{"redis ok", false, 0, 0},
		{"redis away", true, 42, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := metrics.New(metrics.Options{
				Degraded:   func() bool { return tt.degraded },
				JournalLen: func() int { return tt.journal },
				Queued:     func() int { return tt.journal + 1 },
			})
			assert.Equal(t, tt.wantDegraded, value(t, r, "executor_redis_degraded", nil))
			assert.Equal(t, float64(tt.journal), value(t, r, "executor_journal_length", nil))
			assert.Equal(t, float64(tt.journal+1), value(t, r, "executor_queued_tasks", nil))
		})
	}
}

func TestHandlerServesTheExposition(t *testing.T) {
	t.Parallel()
	r := metrics.New(metrics.Options{})
	r.LeaseLost()
	srv := httptest.NewServer(r.Handler())
	t.Cleanup(srv.Close)
	res, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	assert.Contains(t, string(body), "executor_lease_lost_total 1\n")
	assert.Contains(t, string(body), "go_goroutines ")
	assert.Contains(t, string(body), "process_start_time_seconds ")
}

func TestRegistriesAreIndependent(t *testing.T) {
	t.Parallel()
	a, b := metrics.New(metrics.Options{}), metrics.New(metrics.Options{})
	a.Fenced()
	assert.Equal(t, 1.0, value(t, a, "executor_fenced_writes_total", nil))
	assert.Zero(t, value(t, b, "executor_fenced_writes_total", nil))
}
