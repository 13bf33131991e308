package stagekind

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/executor-dev/executor/domain/stage"
)

// KindPrometheus is the kind name of Prometheus.
const KindPrometheus = "prometheus"

// PrometheusOptions configures the prometheus kind.
type PrometheusOptions struct {
	// Client sends the queries, guarded like the http kind's (HTTPOptions.Client).
	Client *http.Client
	// AllowList is the destination allow-list (serve's --prometheus-allow), with the http
	// kind's rules (AllowList): nil or empty allows any address but link-local, cloud
	// metadata, unspecified, multicast and broadcast ones.
	AllowList *AllowList
	// MaxResponseBytes caps a query's answer; zero or negative: DefaultMaxResponseBytes.
	MaxResponseBytes int64
}

// Prometheus is the prometheus kind: an analysis of a metric, measured count times every
// interval through the Prometheus HTTP API's instant query (POST /api/v1/query, which
// Prometheus, Thanos, Mimir and VictoriaMetrics serve alike). Params, already rendered, are
//
//	address            required, the API's base URL (http://prometheus:9090)
//	query              required, a PromQL expression giving an instant vector or a scalar
//	successCondition   an expression over result (see Vector) that passes a measurement
//	failureCondition   an expression over result that fails it; at least one of the two
//	interval, count, failureLimit, inconclusiveLimit, onEmpty   see stage.ParseAnalysis
//	headers            optional object of header name to string (X-Scope-OrgID for Mimir)
//	bearerToken        optional, sent as Authorization: Bearer (usually {{secret "name"}})
//	queryTimeout       optional duration bounding one query (default 10s)
//
// A measurement's verdict: a result with no sample (NaN samples dropped) is onEmpty's; the
// failure condition holding fails it; the success condition holding passes it, not holding
// fails it, or is inconclusive when a failure condition is set too; a condition that cannot
// be evaluated is inconclusive. A query that fails (transport, 5xx, timeout) is sent again
// (QueryTries), then the measurement is inconclusive; one the server refuses as invalid (400
// bad_data), or whose result is a range vector, fails the stage permanently.
//
// The stage fails with ClassAnalysis as soon as more than failureLimit measurements failed,
// and with a retryable failure (retried under the stage's retry policy) as soon as more than
// inconclusiveLimit were inconclusive; it succeeds after count measurements. Every
// measurement is in the attempt's transcript (stage.Request.KeepTranscript); the output is
// {verdict, successful, failed, inconclusive, value, measurements} (the last ten).
type Prometheus struct {
	http *HTTP
	now  func() time.Time
}

var (
	_ stage.ParamValidator = (*Prometheus)(nil)
	_ stage.Handler        = (*Prometheus)(nil)
)

// NewPrometheus returns the prometheus kind configured by opts.
func NewPrometheus(opts PrometheusOptions) *Prometheus {
	allow := opts.AllowList
	if allow == nil {
		allow = &AllowList{}
	}
	return &Prometheus{
		http: NewHTTP(HTTPOptions{Client: opts.Client, AllowList: allow, MaxResponseBytes: opts.MaxResponseBytes}),
		now:  time.Now,
	}
}

// ValidateParams checks a stage's params as Run would, without querying.
func (k *Prometheus) ValidateParams(params map[string]any) error {
	return k.validate(params, false)
}

// ValidateAnalysis checks the params of a ring's analysis (no count: it measures throughout
// the ring's bake).
func (k *Prometheus) ValidateAnalysis(params map[string]any) error {
	return k.validate(params, true)
}

func (k *Prometheus) validate(params map[string]any, ring bool) error {
	p, err := parsePromParams(params, ring)
	if err != nil || k.http.guard == nil {
		return err
	}
	if err := k.http.guard.allow.precheck(p.address.Hostname()); err != nil {
		reason := strings.TrimPrefix(err.Error(), "stagekind: ")
		return &stage.FieldError{Field: "address", Reason: reason, Err: errors.Join(ErrInvalidParams, err)}
	}
	return nil
}

// Measure takes one measurement with params (rendered; a stage's or a ring analysis'): a
// ring's analysis at each of its times, a dry run once. Its error is a permanent failure
// (invalid params, a query the server refuses as invalid); anything else is in the
// measurement's verdict.
func (k *Prometheus) Measure(ctx context.Context, params map[string]any) (stage.Measurement, error) {
	p, err := parsePromParams(params, false)
	if err != nil {
		return stage.Measurement{}, invalidParams(err)
	}
	return k.measure(ctx, p)
}

// measure sends the query (again after an error, QueryTries times in all) and judges its result.
func (k *Prometheus) measure(ctx context.Context, p promParams) (stage.Measurement, error) {
	if k.http.err != nil {
		return stage.Measurement{}, stage.Permanent(k.http.err)
	}
	at := k.now().UTC()
	var samples []sample
	var err error
	for try := 1; try <= QueryTries; try++ {
		if samples, err = k.queryOnce(ctx, p); err == nil || errors.Is(err, errBadQuery) || errors.Is(err, ErrDestinationDenied) {
			break
		}
		if try < QueryTries && !sleepCtx(ctx, QueryRetryWait) {
			break
		}
	}
	switch {
	case ctx.Err() != nil:
		return stage.Measurement{}, fmt.Errorf("%s: %w", p.target(), ctx.Err())
	case errors.Is(err, errBadQuery) || errors.Is(err, ErrDestinationDenied):
		return stage.Measurement{}, stage.Permanent(err)
	case err != nil:
		return stage.Measurement{At: at, Value: "error", Verdict: stage.VerdictInconclusive,
			Message: fmt.Sprintf("the query failed %d times: %s", QueryTries, stage.MessageOf(err))}.Bounded(), nil
	}
	values := make(Vector, len(samples))
	for i, s := range samples {
		values[i] = s.value
	}
	verdict, why := p.judge.verdict(values)
	return stage.Measurement{At: at, Value: valueText(samples), Verdict: verdict, Message: why}.Bounded(), nil
}

// Run measures count times, every interval, and judges the analysis (see Prometheus).
func (k *Prometheus) Run(ctx context.Context, req stage.Request) (json.RawMessage, error) {
	p, err := parsePromParams(req.Params, false)
	if err != nil {
		return nil, invalidParams(err)
	}
	p.header = p.header.Clone() // a stage's queries carry its key and fence, as every stage call does
	p.header.Set("Idempotency-Key", req.IdempotencyKey())
	p.header.Set(FenceHeader, req.FenceToken())
	var log analysisLog
	defer func() { req.KeepTranscript(log.transcript()) }()
	for i := 0; i < p.policy.Count; i++ {
		if i > 0 && !sleepCtx(ctx, p.policy.Interval) {
			return nil, fmt.Errorf("%s: the analysis stopped after %d measurements: %w", p.target(), i, ctx.Err())
		}
		m, err := k.measure(ctx, p)
		if err != nil {
			return nil, err
		}
		log.add(m)
		switch {
		case p.policy.Failing(log.tally):
			return nil, &stage.Error{Class: stage.ClassAnalysis, Message: log.failure("analysis failed", p)}
		case p.policy.Inconclusive(log.tally):
			return nil, &stage.Error{Class: stage.ClassRetryable, Message: log.failure("analysis inconclusive", p)}
		}
	}
	return log.output()
}
