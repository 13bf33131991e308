package bench

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/infra/redisconn"
	"github.com/executor-dev/executor/infra/roundtrips"
	"github.com/executor-dev/executor/server"
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
	// DefaultRolloutQueryRate is the CLI's --query-rate in the deployment shape
	// (--stage-duration): SREs asking where their tenants stand while the rollout runs.
	DefaultRolloutQueryRate = 50
)

// What Result.Through says the measurements went through.
const (
	ThroughUseCases = "use cases" // an executor wired in-process, called through app.Service
	ThroughAPI      = "HTTP API"  // a running serve at Config.URL, called through package client
)

// queryGoroutines is how many goroutines share the query load.
const queryGoroutines = 8

// Config is one bench run. Zero fields take their defaults; negative ones are an error.
type Config struct {
	// URL, when set, is the base URL of a running `executor serve` (http or https): the
	// measurements go through its HTTP API and no executor is wired in-process; Prefix and
	// Workers do not apply (they are the serve's).
	URL string `json:"url,omitempty"`
	// Token is the bearer token sent to URL ("" = none); never printed.
	Token string `json:"-"`
	// RedisURL is the executor's Redis in-process ("" = the in-memory store). Through the API
	// it is optional: the serve's Redis, read only for INFO (cpu, commandstats, memory).
	RedisURL     string `json:"redisUrl,omitempty"`
	RedisCluster bool   `json:"redisCluster,omitempty"` // RedisURL names one node of a Redis Cluster
	// Topology is the in-process executor's (serve --topology): "" or "shared" (the default
	// with Redis: the runs' commands stream on a full-duplex pipeline), or "alone" (batches
	// of them, up to three in flight).
	Topology      string        `json:"topology,omitempty"`
	Prefix        string        `json:"prefix,omitempty"`  // Redis key prefix; a 6-character run id is appended; default DefaultPrefix
	Tenants       int           `json:"tenants"`           // tenants of the measured plan
	Stages        int           `json:"stages"`            // noop stages per tenant
	Concurrency   int           `json:"concurrency"`       // the plan's maxConcurrency
	Workers       int           `json:"workers,omitempty"` // the orchestrator's task slots (in-process only)
	AcceptTenants int           `json:"acceptTenants"`     // tenants of the plan whose acceptance is timed; default 10000
	QueryRate     int           `json:"queryRate"`         // tenant queries per second; default 2000
	QueryDuration time.Duration `json:"queryDuration"`     // how long the queries run; default 2s
	// StageDuration, when positive, gives the measured plan the deployment shape: its stages
	// are sleep stages of that duration instead of noop ones, the tenant queries run during
	// its rollout (at QueryRate, from Submit until the plan ends; QueryDuration does not
	// apply), the makespan is compared with the ideal, and the accept plan is not run.
	StageDuration time.Duration `json:"stageDuration,omitempty"`
	// Executors is how many executors run in-process on the one Redis, each with Workers
	// slots (default 1; more than one needs RedisURL, and not URL). The first submits and
	// waits; tenant queries go to each in turn.
	Executors int `json:"executors,omitempty"`
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
	if _, err := server.ParseTopology(c.Topology); err != nil {
		return c, fmt.Errorf("bench: topology must be shared or alone, got %q", c.Topology)
	}
	if c.QueryDuration < 0 {
		return c, fmt.Errorf("bench: queryDuration must be positive, got %s", c.QueryDuration)
	}
	if c.StageDuration < 0 {
		return c, fmt.Errorf("bench: stageDuration must be positive, got %s", c.StageDuration)
	}
	if c.Executors < 0 {
		return c, fmt.Errorf("bench: executors must be positive, got %d", c.Executors)
	}
	if c.Executors > 1 && (c.RedisURL == "" || c.URL != "") {
		return c, fmt.Errorf("bench: executors must be 1 on the in-memory store and through url (several share a redisUrl in-process), got %d", c.Executors)
	}
	if c.Concurrency > plan.MaxMaxConcurrency {
		return c, fmt.Errorf("bench: concurrency must be at most %d, got %d", plan.MaxMaxConcurrency, c.Concurrency)
	}
	if c.URL != "" {
		if u, err := url.Parse(c.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, fmt.Errorf("bench: url must be an http:// or https:// URL such as http://127.0.0.1:8080, got %q", c.URL)
		}
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Tenants, DefaultTenants)
	def(&c.Stages, DefaultStages)
	def(&c.Concurrency, DefaultConcurrency)
	def(&c.QueryRate, DefaultQueryRate)
	if c.StageDuration == 0 {
		def(&c.AcceptTenants, DefaultAcceptTenants)
		if c.QueryDuration == 0 {
			c.QueryDuration = DefaultQueryDuration
		}
	}
	if c.StageDuration > 0 {
		c.AcceptTenants, c.QueryDuration = 0, 0
	}
	if c.URL != "" { // the serve's own
		c.Workers, c.Prefix, c.Executors = 0, "", 0
		return c, nil
	}
	def(&c.Executors, 1)
	def(&c.Workers, DefaultWorkers)
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	return c, nil
}

// Result is what a run measured. The Redis measurements are zero or absent, and RedisMetrics
// is false, on the in-memory store, and through the API without Config.RedisURL. CPU and
// commands are measured over the plan phase (Submit to the plan's terminal status) and divided
// by Transitions.
type Result struct {
	Store   string `json:"store"`   // "memory" or "redis": the executor's store
	Through string `json:"through"` // ThroughUseCases or ThroughAPI
	RunID   string `json:"runId"`   // this run's id: in its key prefix in-process, in its tenant ids through the API
	Config  Config `json:"config"`

	Transitions       int     `json:"transitions"` // Tenants × Stages
	PlanMs            float64 `json:"planMs"`      // Submit to terminal plan
	TransitionsPerSec float64 `json:"transitionsPerSec"`
	TasksPerSec       float64 `json:"tasksPerSec"`

	// ExecutorCPUUsPerTransition is the executor process's CPU time (user + system) over the
	// plan phase, in µs per transition. In-process it is getrusage(RUSAGE_SELF): the bench
	// driver's own work (its Submit and its waiting) is included, and small. Through the API it
	// is the serve's process_cpu_seconds_total (GET /metrics, 10 ms resolution) after less
	// before: the serve's handling of the bench's requests is included. Always measured.
	ExecutorCPUUsPerTransition float64 `json:"executorCpuUsPerTransition"`

	RedisMetrics bool `json:"redisMetrics"` // the Redis measurements below apply (INFO was read)
	// RedisCPUUsPerTransition is INFO cpu used_cpu_sys + used_cpu_user after less before,
	// summed over a cluster's masters, in µs per transition.
	RedisCPUUsPerTransition float64 `json:"redisCpuUsPerTransition"`
	// RedisCommandsPerTransition is the calls of INFO commandstats after less before, every
	// command summed, per transition. Redis counts the commands a script calls as well as the
	// EVALSHA that runs it; the bench's own INFO calls (a handful) are included, negligible.
	RedisCommandsPerTransition float64 `json:"redisCommandsPerTransition"`
	// RedisScriptCallsPerTransition is the calls of EVALSHA, EVAL, EVALSHA_RO, EVAL_RO, FCALL
	// and FCALL_RO among them.
	RedisScriptCallsPerTransition float64 `json:"redisScriptCallsPerTransition"`
	// RedisCommands is the breakdown by command of RedisCommandsPerTransition, every command
	// whose calls grew, by calls per transition descending.
	RedisCommands     []CommandStat `json:"redisCommands,omitempty"`
	RedisBytesPerTask float64       `json:"redisBytesPerTask"`

	// RoundTripsCounted is true when the two measurements below apply: in-process on Redis
	// (a hook on the executor's client counts them; through the API it cannot). They count a
	// command sent alone and a batch of the `alone` topology's pipeline as one; the `shared`
	// topology's full-duplex pipeline streams its commands, and counts about one per write of
	// the stream (a round trip does not bound them there: docs/performance.md).
	RoundTripsCounted       bool    `json:"roundTripsCounted"`
	RoundTrips              int64   `json:"roundTrips"`
	RoundTripsPerTransition float64 `json:"roundTripsPerTransition"`

	// The deployment shape's (Config.StageDuration), zero otherwise. IdealMs is the makespan
	// of a perfect executor: the plan's waves (Tenants over the tasks that can run at once,
	// Concurrency or every executor's Workers, whichever is fewer, rounded up) times Stages
	// times StageDuration; MakespanRatio is PlanMs over it.
	IdealMs       float64 `json:"idealMs,omitempty"`
	MakespanRatio float64 `json:"makespanRatio,omitempty"`
	// InFlight is the tasks that can run at once (as in IdealMs). MemoryPerRunBytes and
	// GoroutinesPerRun are what a task in flight costs the executors in-process, measured
	// after the plan with a plan of InFlight new tenants and one such stage: at a quarter, a
	// half and three quarters of its stage, the live heap (runtime/metrics
	// /gc/heap/live:bytes) and the goroutines' stacks after a garbage collection, and the
	// goroutines, the sample with the most tasks RUNNING less the same once it ended, divided
	// by those tasks. Zero through the API.
	InFlight          int     `json:"inFlight,omitempty"`
	MemoryPerRunBytes float64 `json:"memoryPerRunBytes,omitempty"`
	GoroutinesPerRun  float64 `json:"goroutinesPerRun,omitempty"`

	AcceptMs float64 `json:"acceptMs"` // Submit of an AcceptTenants-tenant plan; 0 in the deployment shape

	// QueriesDuringRollout says that the queries below ran while the plan rolled out (the
	// deployment shape), not after it.
	QueriesDuringRollout bool `json:"queriesDuringRollout,omitempty"`

	Queries      int     `json:"queries"`
	QueryErrors  int     `json:"queryErrors"`
	QueryRateGot float64 `json:"queryRateAchieved"` // queries per second actually made
	QueryP50Ms   float64 `json:"queryP50Ms"`
	QueryP99Ms   float64 `json:"queryP99Ms"`
}

// CommandStat is one Redis command's share of the plan phase (INFO commandstats).
type CommandStat struct {
	Name               string  `json:"name"`               // lower case, as commandstats names it ("evalsha", "client|setname")
	CallsPerTransition float64 `json:"callsPerTransition"` // calls after less before, per transition
	UsecPerCall        float64 `json:"usecPerCall"`        // usec after less before, per call
}

// Run wires an executor in-process (or, with Config.URL, reaches a running one), runs the
// measurements and tears down what it set up.
func Run(ctx context.Context, cfg Config) (res Result, err error) {
	cfg, err = cfg.withDefaults()
	if err != nil {
		return Result{}, err
	}
	// A short run id: with the default prefix, keys are as long as a real executor's under
	// "executor:", so bytes per task are what an executor stores.
	runID := ulid.Make().String()[20:]
	res = Result{Config: cfg, RunID: runID}
	res.Config.RedisURL = redisconn.Redact(cfg.RedisURL)
	var r *runner
	if cfg.URL == "" {
		r, err = openInProcess(ctx, cfg, runID, &res)
	} else {
		r, err = openAPI(ctx, cfg, runID, &res)
	}
	if err != nil {
		return Result{}, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if cerr := r.close(cctx); cerr != nil {
			err = errors.Join(err, fmt.Errorf("bench: shut down: %w", cerr))
		}
	}()
	// The bench's own calls are not counted as round trips of transitions.
	ctx = roundtrips.Uncounted(ctx)

	tenants, err := measurePlan(ctx, r, &res)
	if err != nil {
		return res, err
	}
	if cfg.StageDuration > 0 { // the queries ran during the rollout; no accept plan
		if r.tenantPrefix == "" { // in-process: the executors are this process
			settle()
			if err := measureRuns(ctx, r, &res); err != nil {
				return res, err
			}
		}
		return res, r.healthy(ctx)
	}
	settle()
	if err := measureAccept(ctx, r, &res); err != nil {
		return res, err
	}
	settle()
	if err := measureQueries(ctx, r, tenants, &res); err != nil {
		return res, err
	}
	return res, r.healthy(ctx)
}

// settle collects the garbage of the measurement before the next one (a 10,000-tenant plan
// leaves megabytes of it), so that each measurement starts from the same quiet process.
func settle() { runtime.GC() }
