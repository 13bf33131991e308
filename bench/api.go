package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/infra/redisconn"
	"github.com/executor-dev/executor/wire"
)

// apiWait is the wait of one long poll on a plan through the API (?wait=).
const apiWait = time.Minute

// cpuMetric is the serve's CPU time in its GET /metrics (Prometheus's process collector).
const cpuMetric = "process_cpu_seconds_total"

// httpAPI drives a running serve through its HTTP API with package client.
type httpAPI struct {
	c     *client.Client
	hc    *http.Client // c's, also for GET /metrics, which client has no method for
	base  string
	token string
}

// newHTTPAPI returns the target of the serve at base. Its connections are kept for the query
// goroutines (net/http keeps 2 idle connections per host by default).
func newHTTPAPI(base, token string) *httpAPI {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 2 * queryGoroutines
	hc := &http.Client{Transport: tr}
	c := client.New(base, token, hc)
	c.UserAgent = "executor-bench"
	return &httpAPI{c: c, hc: hc, base: c.BaseURL(), token: token}
}

// openAPI reaches the serve at cfg.URL, checks that it is ready, and opens cfg.RedisURL (when
// given) for INFO only: the run deletes nothing there, the keys are the serve's.
func openAPI(ctx context.Context, cfg Config, runID string, res *Result) (*runner, error) {
	res.Through = ThroughAPI
	a := newHTTPAPI(cfg.URL, cfg.Token)
	h, err := a.ready(ctx)
	if err != nil {
		a.hc.CloseIdleConnections()
		return nil, err
	}
	res.Store = "redis"
	if h.Redis == "disabled" {
		res.Store = "memory"
	}
	r := &runner{cfg: cfg, target: a, tenantPrefix: runID + "-", healthy: func(ctx context.Context) error {
		if _, err := a.ready(ctx); err != nil {
			return fmt.Errorf("%w: the measurements are not valid", err)
		}
		return nil
	}}
	r.close = func(context.Context) error { a.hc.CloseIdleConnections(); return nil }
	if cfg.RedisURL == "" {
		return r, nil
	}
	if res.Store == "memory" {
		a.hc.CloseIdleConnections()
		return nil, fmt.Errorf("bench: redisUrl %s is given but the executor at %s runs on the in-memory store",
			redisconn.Redact(cfg.RedisURL), a.base)
	}
	conn, err := redisconn.Open(redisconn.Config{URL: cfg.RedisURL, Cluster: cfg.RedisCluster})
	if err != nil {
		a.hc.CloseIdleConnections()
		return nil, fmt.Errorf("bench: %w", err)
	}
	if err := conn.Client.Ping(ctx).Err(); err != nil {
		_ = conn.Client.Close()
		a.hc.CloseIdleConnections()
		return nil, fmt.Errorf("bench: redis %s: %w", redisconn.Redact(cfg.RedisURL), err)
	}
	res.RedisMetrics = true
	r.redis = conn.Client
	r.close = func(context.Context) error { a.hc.CloseIdleConnections(); return conn.Client.Close() }
	return r, nil
}

// ready returns the serve's GET /readyz, failing unless it is ready.
func (a *httpAPI) ready(ctx context.Context) (wire.Health, error) {
	var h wire.Health
	if err := a.c.Call(ctx, http.MethodGet, "/readyz", nil, &h); err != nil {
		return h, fmt.Errorf("bench: the executor at %s is not ready: %w", a.base, err)
	}
	return h, nil
}

func (a *httpAPI) submit(ctx context.Context, s submission) (string, error) {
	req := wire.PlanRequest{Name: s.name, MaxConcurrency: s.concurrency,
		Stages: make([]wire.StageRequest, s.stages), Tenants: make([]wire.TenantRequest, len(s.tenants))}
	kind, params := s.kind()
	for i := range req.Stages {
		req.Stages[i] = wire.StageRequest{Name: stageName(i), Kind: kind, Params: params}
	}
	for i, id := range s.tenants {
		req.Tenants[i] = wire.TenantRequest{ID: id}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return "", fmt.Errorf("bench: encode %s: %w", s.name, err)
	}
	p, _, err := a.c.Submit(ctx, body, client.ContentTypeJSON, "")
	if err != nil {
		return "", err
	}
	return p.PlanID, nil
}

func (a *httpAPI) waitPlan(ctx context.Context, planID string) (plan.Status, error) {
	p, err := a.c.Plan(ctx, planID, apiWait)
	if err != nil {
		return "", err
	}
	return plan.Status(p.Status), nil
}

func (a *httpAPI) tenantTask(ctx context.Context, tenant string) error {
	_, err := a.c.TenantTask(ctx, tenant)
	return err
}

// cpuTime is the serve's process_cpu_seconds_total (GET /metrics, Prometheus text format).
func (a *httpAPI) cpuTime(ctx context.Context) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, client.DefaultRequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+"/metrics", nil)
	if err != nil {
		return 0, fmt.Errorf("bench: GET /metrics: %w", err)
	}
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("bench: GET /metrics: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("bench: GET %s/metrics: %s", a.base, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("bench: GET /metrics: %w", err)
	}
	f := families[cpuMetric]
	if f == nil || len(f.GetMetric()) == 0 || f.GetMetric()[0].GetCounter() == nil {
		return 0, errors.New("bench: GET /metrics has no " + cpuMetric + " counter")
	}
	return time.Duration(f.GetMetric()[0].GetCounter().GetValue() * float64(time.Second)), nil
}
