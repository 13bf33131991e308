package server_test

// End-to-end tests of GET /metrics (docs/metrics.md) over the real wiring: a plan's
// stages, retries and requests show up; degraded mode and the journal on a real Redis; lease
// contention and loss.

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/stagekind"
	"github.com/executor-dev/executor/wire"
)

// scrape is one GET /metrics, parsed.
type scrape map[string]*dto.MetricFamily

func scrapeMetrics(t *testing.T, c *dgClient) scrape {
	t.Helper()
	res, err := c.http.Get(c.base + "/metrics")
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(res.Body)
	require.NoError(t, err)
	return families
}

// series returns the metrics of family name whose labels include labels.
func (s scrape) series(name string, labels map[string]string) []*dto.Metric {
	f := s[name]
	if f == nil {
		return nil
	}
	var out []*dto.Metric
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
		out = append(out, m)
	}
	return out
}

// value is the value of the one counter or gauge series of name with labels, or the sample
// count of a histogram's; it fails the test when there is no such series.
func (s scrape) value(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	ms := s.series(name, labels)
	require.Len(t, ms, 1, "series %s%v", name, labels)
	m := ms[0]
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Untyped != nil:
		return m.GetUntyped().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	require.Fail(t, "unexpected metric type", name)
	return 0
}

// flakyKind fails the first call of each tenant (retryable) and succeeds afterwards.
type flakyKind struct{ calls sync.Map } // tenant -> *atomic.Int32

func (k *flakyKind) register(reg *stagekind.Registry) {
	err := reg.Register("flaky", stage.HandlerFunc(func(_ context.Context, req stage.Request) (json.RawMessage, error) {
		n, _ := k.calls.LoadOrStore(req.TenantID, new(atomic.Int32))
		if n.(*atomic.Int32).Add(1) == 1 {
			return nil, stage.Retryable(errors.New("flaky: first call fails"))
		}
		return json.RawMessage(`{"ok":true}`), nil
	}))
	if err != nil {
		panic(err)
	}
}

func TestMetricsAfterAPlanWithARetriedStage(t *testing.T) {
	t.Parallel()
	flaky := &flakyKind{}
	srv := servertest.Start(t, flaky.register)
	c := newDGClient(t, srv)

	const tenants = 3
	req := wire.PlanRequest{Name: "metrics", Stages: []wire.StageRequest{
		{Name: "push", Kind: "flaky", Retry: &wire.RetryRequest{MaxAttempts: 3, InitialBackoff: "10ms", MaxBackoff: "10ms"}},
		{Name: "done", Kind: "noop"},
	}}
	for _, id := range []string{"metrics-1", "metrics-2", "metrics-3"} {
		req.Tenants = append(req.Tenants, wire.TenantRequest{ID: id})
	}
	var created wire.Plan
	res := c.do(http.MethodPost, "/v1/plans", req, &created)
	require.Equal(t, http.StatusCreated, res.StatusCode)
	c.waitCompleted(created.PlanID)

	s := scrapeMetrics(t, c)
	assert.Equal(t, float64(tenants), s.value(t, "executor_tasks", map[string]string{"status": "COMPLETED"}))
	assert.Len(t, s.series("executor_tasks", nil), len(task.Statuses), "every task status has a series")
	assert.Equal(t, 1.0, s.value(t, "executor_plans", map[string]string{"status": "COMPLETED"}))
	assert.Len(t, s.series("executor_plans", nil), len(plan.Statuses), "every plan status has a series")

	dur := "executor_stage_duration_seconds"
	assert.Equal(t, float64(tenants), s.value(t, dur, map[string]string{"kind": "flaky", "outcome": "ok"}))
	assert.Equal(t, float64(tenants), s.value(t, dur, map[string]string{"kind": "flaky", "outcome": "retryable"}))
	assert.Equal(t, float64(tenants), s.value(t, dur, map[string]string{"kind": "noop", "outcome": "ok"}))
	assert.Equal(t, float64(tenants), s.value(t, "executor_stage_retries_total", map[string]string{"kind": "flaky"}))
	assert.Zero(t, s.value(t, "executor_fenced_writes_total", nil))
	assert.Zero(t, s.value(t, "executor_lease_contention_total", nil))
	assert.Zero(t, s.value(t, "executor_redis_degraded", nil), "the memory store is never degraded")
	assert.Zero(t, s.value(t, "executor_journal_length", nil))
	assert.Zero(t, s.value(t, "executor_queued_tasks", nil), "nothing waits once the plan completed")
	assert.NotEmpty(t, s.series("go_goroutines", nil))
	assert.NotEmpty(t, s.series("process_cpu_seconds_total", nil))

	httpDur := "executor_http_request_duration_seconds"
	assert.Equal(t, 1.0, s.value(t, httpDur, map[string]string{"route": "/v1/plans", "method": "POST", "code": "201"}))
	assert.NotEmpty(t, s.series(httpDur, map[string]string{"route": "/v1/plans/{planId}", "method": "GET", "code": "200"}))
	for name, f := range s {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				assert.NotContains(t, l.GetValue(), created.PlanID, "%s has a raw plan id in label %s", name, l.GetName())
			}
		}
	}
}

// A tenant whose lease another executor holds fails its task: counted as contention.
func TestMetricsCountLeaseContention(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	other := lock.NewRedis(rs.Client(), lock.RedisOptions{TTL: time.Minute})
	held, err := other.Acquire(context.Background(), "locked-1", "other-instance:task")
	require.NoError(t, err)
	t.Cleanup(func() { _ = held.Release(context.Background()) })

	srv := servertest.With(t, server.Config{RedisURL: rs.URL(), LeaseTTL: 2 * time.Second, Logger: dgLogger()})
	c := newDGClient(t, srv)
	req := wire.PlanRequest{Name: "contended", Stages: []wire.StageRequest{{Name: "one", Kind: "noop"}},
		Tenants: []wire.TenantRequest{{ID: "locked-1"}}}
	var created wire.Plan
	require.Equal(t, http.StatusCreated, c.do(http.MethodPost, "/v1/plans", req, &created).StatusCode)
	var p wire.Plan
	require.Equal(t, http.StatusOK, c.do(http.MethodGet, "/v1/plans/"+created.PlanID+"?wait=20s", nil, &p).StatusCode)
	require.Equal(t, "FAILED", p.Status)

	s := scrapeMetrics(t, c)
	assert.Equal(t, 1.0, s.value(t, "executor_lease_contention_total", nil))
	assert.Equal(t, 1.0, s.value(t, "executor_tasks", map[string]string{"status": "FAILED"}))
	assert.Empty(t, s.series("executor_stage_duration_seconds", nil), "no stage ran")
}

// A run whose tenant lease key another executor took over in Redis loses its lease: counted.
func TestMetricsCountLeaseLoss(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	rec := newDGBake()
	srv := servertest.With(t, server.Config{RedisURL: rs.URL(), LeaseTTL: 2 * time.Second, Logger: dgLogger()}, rec.register)
	c := newDGClient(t, srv)
	p := newDGPlan("lost", 1, []int{60_000}, 1)
	c.submit(p)
	dgPoll(t, dgWait, func() bool { return c.tenantTask(p.tenants[0]).Status == "RUNNING" }, "the task never ran")

	lockKey := rediskey.New("").TenantLock(p.tenants[0])
	other := strings.Repeat("t", 22) + "other-instance:task" // redislock's 22-character token, then the owner
	require.NoError(t, rs.Client().Set(context.Background(), lockKey, other, time.Minute).Err())
	dgPoll(t, dgWait, func() bool { return c.tenantTask(p.tenants[0]).Status == "INTERRUPTED" }, "the run never noticed")

	s := scrapeMetrics(t, c)
	assert.Equal(t, 1.0, s.value(t, "executor_lease_lost_total", nil))
	assert.Equal(t, 1.0, s.value(t, "executor_stage_duration_seconds", map[string]string{"kind": "bake", "outcome": "lease_lost"}))
}

// While Redis is away the executor reports degraded and counts the writes waiting for it;
// once Redis is back and the journal written back, both return to 0.
func TestMetricsReportDegradedModeAndTheJournal(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	rec := newDGBake()
	srv := servertest.With(t, server.Config{RedisURL: rs.URL(), Topology: server.TopologyAlone, LeaseTTL: 2 * time.Second, Logger: dgLogger()}, rec.register)
	c := newDGClient(t, srv)
	s := scrapeMetrics(t, c)
	require.Zero(t, s.value(t, "executor_redis_degraded", nil))
	require.Zero(t, s.value(t, "executor_journal_length", nil))

	rs.Kill()
	p := newDGPlan("journaled", 2, []int{10, 10}, 0)
	submitted := c.submit(p) // Redis fails it: written to memory and journaled
	c.waitRedis("degraded")
	c.waitCompleted(submitted.PlanID)
	s = scrapeMetrics(t, c)
	assert.Equal(t, 1.0, s.value(t, "executor_redis_degraded", nil))
	assert.Positive(t, s.value(t, "executor_journal_length", nil), "writes wait for Redis")
	assert.Equal(t, 2.0, s.value(t, "executor_tasks", map[string]string{"status": "COMPLETED"}))

	rs.Restart()
	c.waitRedis("ok")
	dgPoll(t, dgWait, func() bool {
		s = scrapeMetrics(t, c)
		return s.value(t, "executor_redis_degraded", nil) == 0 && s.value(t, "executor_journal_length", nil) == 0
	}, "degraded or journal never back to 0: %v", s)
	dgRequireRedisMatchesAPI(t, c, rs.Client(), p, submitted.PlanID)
}

// The access log of the real wiring: one JSON record per API request, none for probes.
func TestAccessLogOfTheExecutor(t *testing.T) {
	t.Parallel()
	logs := &servertest.Buffer{}
	srv := servertest.With(t, server.Config{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	c := newDGClient(t, srv)
	c.readyz()
	var list wire.PlanList
	require.Equal(t, http.StatusOK, c.do(http.MethodGet, "/v1/plans?limit=5", nil, &list).StatusCode)

	var access []map[string]any
	require.Eventually(t, func() bool {
		access = access[:0]
		for _, r := range logRecords(logs) {
			if r["msg"] == "http request" {
				access = append(access, r)
			}
		}
		return len(access) >= 1
	}, 5*time.Second, 10*time.Millisecond)
	require.Len(t, access, 1, "GET /readyz is not logged")
	assert.Equal(t, "/v1/plans", access[0]["route"])
	assert.Equal(t, "/v1/plans", access[0]["path"])
	assert.False(t, strings.Contains(logs.String(), "limit=5"), "the query string is not logged")
}
