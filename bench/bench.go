package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/infra/redisconn"
	"github.com/executor-dev/executor/stagekind"
)

// Defaults of Config's zero fields.
const (
	DefaultPrefix        = "xb:"
	DefaultTenants       = 10000
	DefaultStages        = 10
	DefaultConcurrency   = 100
	DefaultWorkers       = 64
	DefaultAcceptTenants = 10000
	DefaultQueryRate     = 2000
	DefaultQueryDuration = 2 * time.Second
)

// queryGoroutines is how many goroutines share the query load.
const queryGoroutines = 8

// Config is one bench run. Zero fields take their defaults; negative ones are an error.
type Config struct {
	RedisURL      string        `json:"redisUrl,omitempty"`     // "" = the in-memory store
	RedisCluster  bool          `json:"redisCluster,omitempty"` // RedisURL names one node of a Redis Cluster
	Prefix        string        `json:"prefix,omitempty"`       // Redis key prefix; a 6-character run id is appended; default DefaultPrefix
	Tenants       int           `json:"tenants"`                // tenants of the measured plan
	Stages        int           `json:"stages"`                 // noop stages per tenant
	Concurrency   int           `json:"concurrency"`            // the plan's maxConcurrency
	Workers       int           `json:"workers"`                // the orchestrator's task slots
	AcceptTenants int           `json:"acceptTenants"`          // tenants of the plan whose acceptance is timed; default 10000
	QueryRate     int           `json:"queryRate"`              // tenant queries per second; default 2000
	QueryDuration time.Duration `json:"queryDuration"`          // how long the queries run; default 2s
}

func (c Config) withDefaults() (Config, error) {
	for name, v := range map[string]int{
		"tenants": c.Tenants, "stages": c.Stages, "concurrency": c.Concurrency, "workers": c.Workers,
		"acceptTenants": c.AcceptTenants, "queryRate": c.QueryRate,
	} {
		if v < 0 {
			return c, fmt.Errorf("bench: %s must be positive, got %d", name, v)
		}
	}
	if c.QueryDuration < 0 {
		return c, fmt.Errorf("bench: queryDuration must be positive, got %s", c.QueryDuration)
	}
	if c.Concurrency > plan.MaxMaxConcurrency {
		return c, fmt.Errorf("bench: concurrency must be at most %d, got %d", plan.MaxMaxConcurrency, c.Concurrency)
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Tenants, DefaultTenants)
	def(&c.Stages, DefaultStages)
	def(&c.Concurrency, DefaultConcurrency)
	def(&c.Workers, DefaultWorkers)
	def(&c.AcceptTenants, DefaultAcceptTenants)
	def(&c.QueryRate, DefaultQueryRate)
	if c.QueryDuration == 0 {
		c.QueryDuration = DefaultQueryDuration
	}
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	return c, nil
}

// Result is what a run measured. The Redis-only measurements are zero, and RedisMetrics is
// false, on the in-memory store.
type Result struct {
	Store  string `json:"store"` // "memory" or "redis"
	Config Config `json:"config"`

	Transitions       int     `json:"transitions"` // Tenants × Stages
	PlanMs            float64 `json:"planMs"`      // Submit to terminal plan
	TransitionsPerSec float64 `json:"transitionsPerSec"`
	TasksPerSec       float64 `json:"tasksPerSec"`

	RedisMetrics            bool    `json:"redisMetrics"` // the two measurements below apply (Redis)
	RoundTrips              int64   `json:"roundTrips"`
	RoundTripsPerTransition float64 `json:"roundTripsPerTransition"`
	RedisBytesPerTask       float64 `json:"redisBytesPerTask"`

	AcceptMs float64 `json:"acceptMs"` // Submit of an AcceptTenants-tenant plan

	Queries      int     `json:"queries"`
	QueryErrors  int     `json:"queryErrors"`
	QueryRateGot float64 `json:"queryRateAchieved"` // queries per second actually made
	QueryP50Ms   float64 `json:"queryP50Ms"`
	QueryP99Ms   float64 `json:"queryP99Ms"`
}

// Run wires an executor, runs the measurements and tears the executor down.
func Run(ctx context.Context, cfg Config) (res Result, err error) {
	cfg, err = cfg.withDefaults()
	if err != nil {
		return Result{}, err
	}
	res = Result{Store: "memory", Config: cfg}
	if cfg.RedisURL != "" {
		res.Store, res.RedisMetrics = "redis", true
		res.Config.RedisURL = redisconn.Redact(cfg.RedisURL)
	}
	// A short run id: with the default prefix, keys are as long as a real executor's under
	// "executor:", so bytes per task are what an executor stores.
	runID := ulid.Make().String()[20:]
	logger := slog.New(slog.DiscardHandler)
	e, err := newExecutor(ctx, cfg.RedisURL, cfg.RedisCluster, cfg.Prefix+runID+":", cfg.Workers, logger)
	if err != nil {
		return Result{}, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if cerr := e.close(cctx); cerr != nil {
			err = errors.Join(err, fmt.Errorf("bench: shut down: %w", cerr))
		}
	}()
	// The bench's own calls are not counted as round trips of transitions.
	ctx = uncounted(ctx)

	tenants, err := measurePlan(ctx, e, cfg, &res)
	if err != nil {
		return res, err
	}
	settle()
	if err := measureAccept(ctx, e, cfg, &res); err != nil {
		return res, err
	}
	settle()
	if err := measureQueries(ctx, e, cfg, tenants, &res); err != nil {
		return res, err
	}
	if e.Degraded() {
		return res, errors.New("bench: Redis went away during the run: the measurements are not valid")
	}
	return res, nil
}

// settle collects the garbage of the measurement before the next one (a 10,000-tenant plan
// leaves megabytes of it), so that each measurement starts from the same quiet process.
func settle() { runtime.GC() }

// measurePlan runs the Tenants × Stages plan and returns its tenant ids.
func measurePlan(ctx context.Context, e *executor, cfg Config, res *Result) ([]string, error) {
	stages := make([]stage.Spec, cfg.Stages)
	for i := range stages {
		stages[i] = stage.Spec{Name: fmt.Sprintf("s%d", i+1), Kind: stagekind.KindNoop}
	}
	tenants := tenantIDs("t", cfg.Tenants)
	var before int64
	if e.redis != nil {
		var err error
		if before, err = e.usedMemory(ctx); err != nil {
			return nil, err
		}
	}
	rt0 := e.roundTrips()
	start := time.Now()
	if _, err := runPlan(ctx, e, "bench-transitions", stages, tenants, cfg.Concurrency); err != nil {
		return nil, err
	}
	elapsed := time.Since(start)
	rt := e.roundTrips() - rt0

	secs := elapsed.Seconds()
	res.Transitions = cfg.Tenants * cfg.Stages
	res.PlanMs = ms(elapsed)
	res.TransitionsPerSec = float64(res.Transitions) / secs
	res.TasksPerSec = float64(cfg.Tenants) / secs
	if e.redis != nil {
		after, err := e.usedMemory(ctx)
		if err != nil {
			return nil, err
		}
		res.RoundTrips = rt
		res.RoundTripsPerTransition = float64(rt) / float64(res.Transitions)
		res.RedisBytesPerTask = float64(after-before) / float64(cfg.Tenants)
	}
	return tenants, nil
}

// measureAccept times the Submit of an AcceptTenants-tenant plan of one noop stage, then waits
// for that plan to end so that it does not load the queries.
func measureAccept(ctx context.Context, e *executor, cfg Config, res *Result) error {
	req := submitRequest("bench-accept", []stage.Spec{{Name: "s1", Kind: stagekind.KindNoop}},
		tenantIDs("a", cfg.AcceptTenants), cfg.Concurrency)
	start := time.Now()
	sub, err := e.svc.Submit(ctx, req)
	if err != nil {
		return fmt.Errorf("bench: submit the accept plan: %w", err)
	}
	res.AcceptMs = ms(time.Since(start))
	return waitCompleted(ctx, e, sub.Plan.Plan.ID())
}

// measureQueries runs QueryRate TenantTask calls per second on random tenants for QueryDuration.
func measureQueries(ctx context.Context, e *executor, cfg Config, tenants []string, res *Result) error {
	g := min(queryGoroutines, cfg.QueryRate)
	interval := time.Duration(float64(time.Second) * float64(g) / float64(cfg.QueryRate))
	qctx, cancel := context.WithTimeout(ctx, cfg.QueryDuration)
	defer cancel()
	lat := make([][]time.Duration, g)
	errs := make([]int, g)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range g {
		wg.Go(func() {
			tick := time.NewTicker(interval)
			defer tick.Stop()
			for first := true; ; first = false {
				if !first {
					select {
					case <-qctx.Done():
						return
					case <-tick.C:
					}
				}
				tenant := tenants[rand.IntN(len(tenants))]
				t0 := time.Now()
				_, err := e.svc.TenantTask(ctx, tenant)
				d := time.Since(t0)
				if err != nil {
					errs[i]++
					continue
				}
				lat[i] = append(lat[i], d)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(lat...)
	for _, n := range errs {
		res.QueryErrors += n
	}
	res.Queries = len(all) + res.QueryErrors
	res.QueryRateGot = float64(res.Queries) / elapsed.Seconds()
	if len(all) == 0 {
		return fmt.Errorf("bench: no tenant query succeeded (%d failed)", res.QueryErrors)
	}
	slices.Sort(all)
	res.QueryP50Ms = ms(percentile(all, 0.50))
	res.QueryP99Ms = ms(percentile(all, 0.99))
	return nil
}

// runPlan submits a plan and waits until it completed.
func runPlan(ctx context.Context, e *executor, name string, stages []stage.Spec, tenants []string, concurrency int) (string, error) {
	sub, err := e.svc.Submit(ctx, submitRequest(name, stages, tenants, concurrency))
	if err != nil {
		return "", fmt.Errorf("bench: submit %s: %w", name, err)
	}
	id := sub.Plan.Plan.ID()
	return id, waitCompleted(ctx, e, id)
}

// waitCompleted waits until the plan is terminal and fails unless it completed.
func waitCompleted(ctx context.Context, e *executor, planID string) error {
	for {
		v, err := e.svc.WaitPlan(ctx, planID, app.MaxWait)
		if err != nil {
			return fmt.Errorf("bench: wait for plan %s: %w", planID, err)
		}
		switch st := v.Plan.Status(); {
		case st == plan.Completed:
			return nil
		case st.Terminal():
			return fmt.Errorf("bench: plan %s ended %s, not %s", planID, st, plan.Completed)
		}
	}
}

func submitRequest(name string, stages []stage.Spec, tenants []string, concurrency int) app.SubmitRequest {
	in := make([]app.TenantInput, len(tenants))
	for i, id := range tenants {
		in[i] = app.TenantInput{ID: id}
	}
	return app.SubmitRequest{Name: name, MaxConcurrency: concurrency, Stages: stages, Tenants: in}
}

func tenantIDs(prefix string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s%07d", prefix, i)
	}
	return ids
}

// percentile returns the q-quantile of sorted (nearest rank).
func percentile(sorted []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (e *executor) roundTrips() int64 {
	if e.rt == nil {
		return 0
	}
	return e.rt.count()
}
