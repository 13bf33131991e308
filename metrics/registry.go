package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// namespace prefixes every metric of the executor.
const namespace = "executor"

// StageBuckets are the bounds, in seconds, of executor_stage_duration_seconds: from a noop's
// milliseconds to an hour-long bake.
var StageBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}

// HTTPBuckets are the bounds, in seconds, of executor_http_request_duration_seconds: the
// API's quick answers, and long polls (?wait=, at most a few minutes) in the upper ones.
var HTTPBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}

// Options tells a Registry where to read what it reports at scrape time. Nil funcs report
// nothing (StatusCounts) or 0 (Degraded, JournalLen, Queued).
type Options struct {
	// StatusCounts counts the plans and tasks this executor holds by status
	// (memrepo.DB.StatusCounts, redisrepo.Store.StatusCounts).
	StatusCounts func() (map[plan.Status]int, map[task.Status]int)
	// Degraded reports whether the executor runs on memory because Redis is away.
	Degraded func() bool
	// JournalLen reports how many writes wait to be written back to Redis.
	JournalLen func() int
	// Queued reports how many tasks wait for a worker slot (orchestrator.Orchestrator.Queued).
	Queued func() int
}

// Registry holds the executor's metrics on a Prometheus registry of its own. Its methods are
// safe for concurrent use.
type Registry struct {
	reg             *prometheus.Registry
	stageDuration   *prometheus.HistogramVec
	stageRetries    *prometheus.CounterVec
	fenced          prometheus.Counter
	leaseContention prometheus.Counter
	leaseLost       prometheus.Counter
	rollbacks       *prometheus.CounterVec
	scheduleLate    prometheus.Histogram
	httpDuration    *prometheus.HistogramVec
}

// New returns a Registry with the Go and process collectors and every executor_* metric
// registered.
func New(opts Options) *Registry {
	r := &Registry{
		reg: prometheus.NewRegistry(),
		stageDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "stage_duration_seconds",
			Help:    "Duration of stage attempts by stage kind and outcome (ok, or the failure class: retryable, permanent, timeout, cancelled, shutdown, lease_lost, fenced).",
			Buckets: StageBuckets,
		}, []string{"kind", "outcome"}),
		stageRetries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "stage_retries_total",
			Help: "Failed stage attempts that are retried, by stage kind.",
		}, []string{"kind"}),
		fenced: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "fenced_writes_total",
			Help: "Writes refused because a newer run owns the task (its fence epoch is newer), live or on write-back after an outage.",
		}),
		leaseContention: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "lease_contention_total",
			Help: "Task runs that found their tenant's lease held by someone else (the task fails with class tenant_locked).",
		}),
		leaseLost: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "lease_lost_total",
			Help: "Task runs that lost their tenant's lease while running (the task ends INTERRUPTED).",
		}),
		rollbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "rollbacks_started_total",
			Help: "Task rollbacks started, by trigger: on_failure (the plan's onFailure turned a failed run back) or operator (a rollback of a tenant, a filter, or a rejected ring). How they end: executor_tasks{status=\"ROLLED_BACK\"|\"ROLLBACK_FAILED\"}; their undo attempts are in executor_stage_duration_seconds.",
		}, []string{"trigger"}),
		scheduleLate: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Name: "scheduled_start_lateness_seconds",
			Help:    "How late scheduled plans started after their startAt, on the executor that started them (target: under 50 ms).",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 5, 30},
		}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "http_request_duration_seconds",
			Help:    "Duration of HTTP requests by route pattern (\"unmatched\" when no route matched), method and status code.",
			Buckets: HTTPBuckets,
		}, []string{"route", "method", "code"}),
	}
	r.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		r.stageDuration, r.stageRetries, r.fenced, r.leaseContention, r.leaseLost, r.rollbacks, r.scheduleLate, r.httpDuration,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: namespace, Name: "redis_degraded",
			Help: "1 while the executor runs on memory because Redis is away, else 0 (always 0 on the in-memory store).",
		}, boolGauge(opts.Degraded)),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: namespace, Name: "journal_length",
			Help: "Writes made while Redis was away that wait to be written back (0 on the in-memory store).",
		}, intGauge(opts.JournalLen)),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: namespace, Name: "queued_tasks",
			Help: "Tasks waiting for a worker slot on this executor; a submission that would take it past --max-queued is answered 429.",
		}, intGauge(opts.Queued)),
	)
	if opts.StatusCounts != nil {
		r.reg.MustRegister(newStatusCollector(opts.StatusCounts))
	}
	return r
}

func boolGauge(f func() bool) func() float64 {
	return func() float64 {
		if f != nil && f() {
			return 1
		}
		return 0
	}
}

func intGauge(f func() int) func() float64 {
	return func() float64 {
		if f == nil {
			return 0
		}
		return float64(f())
	}
}

// Handler serves the registry in the Prometheus exposition formats (GET /metrics).
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{Registry: r.reg})
}

// Gatherer returns the underlying registry, for tests and tools that read the metrics
// without HTTP.
func (r *Registry) Gatherer() prometheus.Gatherer { return r.reg }

// StageDone observes a stage attempt of kind that ended with outcome after d.
func (r *Registry) StageDone(kind, outcome string, d time.Duration) {
	r.stageDuration.WithLabelValues(kind, outcome).Observe(d.Seconds())
}

// StageRetried counts a failed attempt of a stage of kind that will be retried.
func (r *Registry) StageRetried(kind string) { r.stageRetries.WithLabelValues(kind).Inc() }

// Fenced counts a write refused because a newer run owns the task.
func (r *Registry) Fenced() { r.fenced.Inc() }

// LeaseContended counts a run that found its tenant's lease held by someone else.
func (r *Registry) LeaseContended() { r.leaseContention.Inc() }

// ScheduledStart observes how late a scheduled plan started (a negative lateness counts as 0).
func (r *Registry) ScheduledStart(late time.Duration) { r.scheduleLate.Observe(max(late, 0).Seconds()) }

// LeaseLost counts a run that lost its tenant's lease.
func (r *Registry) LeaseLost() { r.leaseLost.Inc() }

// RollbackStarted counts a task rollback that started, by trigger.
func (r *Registry) RollbackStarted(trigger string) { r.rollbacks.WithLabelValues(trigger).Inc() }

// ObserveRequest observes an HTTP request: its route pattern (never the raw path), method,
// status code and duration. It is the api's Options.ObserveRequest.
func (r *Registry) ObserveRequest(route, method string, code int, d time.Duration) {
	r.httpDuration.WithLabelValues(route, method, strconv.Itoa(code)).Observe(d.Seconds())
}
