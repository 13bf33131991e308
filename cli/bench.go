package cli

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/executor-dev/executor/bench"
)

func (a *invocation) benchCmd() *cobra.Command {
	cfg := bench.Config{
		Prefix: bench.DefaultPrefix, Tenants: bench.DefaultTenants, Stages: bench.DefaultStages,
		Concurrency: bench.DefaultConcurrency, Workers: bench.DefaultWorkers, AcceptTenants: bench.DefaultAcceptTenants,
		QueryRate: bench.DefaultQueryRate, QueryDuration: bench.DefaultQueryDuration,
	}
	var cpuProfile, memProfile string
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure throughput, latency and cost, in-process or over HTTP",
		Long: `Measure an executor wired in-process (no HTTP, only the built-in stage kinds), on the
in-memory store or on the Redis given with --redis (keys under --prefix plus a 6-character run id,
deleted when the run ends); or, with --url, a running 'executor serve' through its HTTP API
(--token or ` + EnvToken + `), with the same plans and queries: --redis then names the serve's
Redis, read only for INFO (nothing is deleted), and tenant ids begin with the run id.

It reports stage transitions/s and tasks/s of a plan of --tenants × --stages noop stages at
--concurrency; over that plan, per transition: the executor's CPU (in-process getrusage, the
bench driver included; through the API the serve's process_cpu_seconds_total), Redis's CPU
(INFO cpu), Redis commands and script calls (INFO commandstats, which counts the commands
scripts call) with the top commands, and Redis round trips (in-process only); Redis bytes
per task; the time to accept a plan of --accept-tenants tenants; and tenant query latency
p50/p99 at --query-rate requests/s for --query-duration. A table with the targets of issues
5 and 19, or -o json.`,
		Example: `  executor bench
  executor bench --redis redis://127.0.0.1:6379/0 --tenants 100000
  executor bench --url http://127.0.0.1:8080 --redis redis://127.0.0.1:6379/0
  executor bench --tenants 100 --stages 5 -o json`,
		Args:        noArgs,
		Annotations: map[string]string{annotationNoName: "a measurement"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.checkBenchConfig(cmd, &cfg); err != nil {
				return err
			}
			stop, err := startCPUProfile(cpuProfile)
			if err != nil {
				return err
			}
			res, err := bench.Run(cmd.Context(), cfg)
			if perr := stop(); err == nil {
				err = perr
			}
			if perr := writeAllocProfile(memProfile); err == nil {
				err = perr
			}
			if err != nil {
				return err
			}
			return a.print(res, benchTable(res))
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.URL, "url", "", "base URL of a running serve to measure through its HTTP API; empty: an executor in-process")
	f.StringVar(&cfg.RedisURL, "redis", "", "Redis URL in any form serve --redis takes (one node, Cluster, Sentinel); empty: the in-memory store (with --url: the serve's Redis, for INFO only; empty: no Redis measurements)")
	f.BoolVar(&cfg.RedisCluster, "redis-cluster", false, "--redis names one node of a Redis Cluster")
	f.StringVar(&cfg.Topology, "topology", "", "the in-process executor's topology, as serve --topology: shared (the default) or alone (not with --url)")
	f.StringVar(&cfg.Prefix, "prefix", cfg.Prefix, "Redis key prefix; a 6-character run id is appended (not with --url)")
	f.IntVar(&cfg.Tenants, "tenants", cfg.Tenants, "tenants of the measured plan")
	f.IntVar(&cfg.Stages, "stages", cfg.Stages, "noop stages per tenant")
	f.IntVar(&cfg.Concurrency, "concurrency", cfg.Concurrency, "the plan's maxConcurrency (at most 1000)")
	f.IntVar(&cfg.Workers, "workers", cfg.Workers, "tasks running at once across all plans (not with --url)")
	f.IntVar(&cfg.AcceptTenants, "accept-tenants", cfg.AcceptTenants, "tenants of the plan whose acceptance is timed")
	f.IntVar(&cfg.QueryRate, "query-rate", cfg.QueryRate, "tenant queries per second")
	f.DurationVar(&cfg.QueryDuration, "query-duration", cfg.QueryDuration, "how long the tenant queries run")
	f.DurationVar(&cfg.StageDuration, "stage-duration", 0, "the deployment shape: sleep stages of this duration instead of noop ones, tenant queries during the rollout (at --query-rate, default then 50/s), makespan against the ideal, no accept plan")
	f.IntVar(&cfg.Executors, "executors", 1, "executors in-process on the one --redis, each with --workers slots (not with --url)")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	f.StringVar(&memProfile, "memprofile", "", "write the allocations of the whole run (the allocs profile) to this file (go tool pprof -sample_index alloc_space)")
	return cmd
}

// checkBenchConfig refuses the flags out of range, and those that do not apply with --url (then
// it sets the token the bench calls the serve with).
func (a *invocation) checkBenchConfig(cmd *cobra.Command, cfg *bench.Config) error {
	for name, v := range map[string]int{
		"tenants": cfg.Tenants, "stages": cfg.Stages, "concurrency": cfg.Concurrency, "workers": cfg.Workers,
		"accept-tenants": cfg.AcceptTenants, "query-rate": cfg.QueryRate, "executors": cfg.Executors,
	} {
		if v < 1 {
			return usagef("invalid --%s %d: want at least 1", name, v)
		}
	}
	if cfg.StageDuration < 0 {
		return usagef("invalid --stage-duration %s: want a positive duration", cfg.StageDuration)
	}
	if cfg.StageDuration > 0 && !cmd.Flags().Changed("query-rate") {
		cfg.QueryRate = bench.DefaultRolloutQueryRate
	}
	if cfg.Executors > 1 && cfg.RedisURL == "" {
		return usagef("--executors %d needs --redis: executors share a Redis, not memory", cfg.Executors)
	}
	if cfg.Concurrency > 1000 {
		return usagef("invalid --concurrency %d: want at most 1000", cfg.Concurrency)
	}
	if cfg.QueryDuration <= 0 {
		return usagef("invalid --query-duration %s: want a positive duration", cfg.QueryDuration)
	}
	if cfg.URL == "" {
		return nil
	}
	if u, err := url.Parse(cfg.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("invalid --url %q: want an http:// or https:// URL such as %s", cfg.URL, DefaultServer)
	}
	for _, name := range []string{"workers", "prefix", "topology", "executors"} {
		if cmd.Flags().Changed(name) {
			return usagef("--%s does not apply with --url: the serve's own applies", name)
		}
	}
	cfg.Token = a.token
	return nil
}

// benchTopCommands is how many Redis commands the table lists one by one.
const benchTopCommands = 8

// benchTable renders a result as metric, value and the target of issues 5, 19 and 38.
func benchTable(r bench.Result) func(io.Writer) {
	return func(w io.Writer) {
		fmt.Fprintln(w, "METRIC\tVALUE\tTARGET")
		benchPlanRows(w, r)
		benchRedisRows(w, r)
		benchQueryRows(w, r)
	}
}

// benchPlanRows are the table's rows about the measured plan and the executor's cost.
func benchPlanRows(w io.Writer, r bench.Result) {
	c := r.Config
	through, workers := r.Through, fmt.Sprintf("%d workers", c.Workers)
	if c.Executors > 1 {
		workers = fmt.Sprintf("%d executors × %d workers", c.Executors, c.Workers)
	}
	if r.Through == bench.ThroughAPI {
		through, workers = r.Through+" "+c.URL, "the serve's workers"
	}
	stages := "noop stages"
	if c.StageDuration > 0 {
		stages = "sleep stages of " + c.StageDuration.String()
	}
	fmt.Fprintf(w, "store\t%s\t-\n", r.Store)
	fmt.Fprintf(w, "through\t%s\t-\n", through)
	fmt.Fprintf(w, "plan\t%d tenants × %d %s, concurrency %d, %s\t-\n", c.Tenants, c.Stages, stages, c.Concurrency, workers)
	fmt.Fprintf(w, "plan wall time\t%s\t-\n", fmtMs(r.PlanMs))
	if c.StageDuration > 0 {
		fmt.Fprintf(w, "makespan ÷ ideal\t%.3f (ideal %s, %d in flight)\t≤ 1.03\n", r.MakespanRatio, fmtMs(r.IdealMs), r.InFlight)
	} else {
		fmt.Fprintf(w, "stage transitions/s\t%.0f\t≥ 30000\n", r.TransitionsPerSec)
	}
	fmt.Fprintf(w, "tasks/s\t%.0f\t-\n", r.TasksPerSec)
	if c.StageDuration > 0 {
		fmt.Fprintf(w, "executor CPU/transition\t%s\t≤ 60µs (100000 × 3 of 1s)\n", fmtUs(r.ExecutorCPUUsPerTransition))
		if r.Through == bench.ThroughUseCases {
			fmt.Fprintf(w, "memory per task in flight\t%.0f bytes (heap and stacks), %.1f goroutines\t-\n", r.MemoryPerRunBytes, r.GoroutinesPerRun)
		}
		return
	}
	fmt.Fprintf(w, "executor CPU/transition\t%s\t≤ 25µs (10000 × 10)\n", fmtUs(r.ExecutorCPUUsPerTransition))
}

// benchRedisRows are the table's rows about Redis.
func benchRedisRows(w io.Writer, r bench.Result) {
	// redis is v where the Redis measurements apply, else why not.
	redis := func(v string) string {
		switch {
		case r.Store == "memory":
			return "n/a (memory)"
		case !r.RedisMetrics:
			return "n/a (no --redis)"
		}
		return v
	}
	roundTrips := redis(strconv.FormatFloat(r.RoundTripsPerTransition, 'f', 2, 64))
	switch {
	case r.RoundTripsCounted || r.Store == "memory":
	case r.Through == bench.ThroughAPI:
		roundTrips = "n/a (HTTP API)"
	default:
		roundTrips = "n/a (deployment shape: not counted)"
	}
	fmt.Fprintf(w, "Redis CPU/transition\t%s\t≤ 12µs (10000 × 10)\n", redis(fmtUs(r.RedisCPUUsPerTransition)))
	fmt.Fprintf(w, "Redis round trips/transition\t%s\t≤ 1\n", roundTrips)
	fmt.Fprintf(w, "Redis commands/transition\t%s\t-\n", redis(strconv.FormatFloat(r.RedisCommandsPerTransition, 'f', 2, 64)))
	fmt.Fprintf(w, "Redis script calls/transition\t%s\t-\n", redis(strconv.FormatFloat(r.RedisScriptCallsPerTransition, 'f', 2, 64)))
	for _, cs := range r.RedisCommands[:min(benchTopCommands, len(r.RedisCommands))] {
		fmt.Fprintf(w, "  %s\t%.2f/transition, %s/call\t-\n", cs.Name, cs.CallsPerTransition, fmtUs(cs.UsecPerCall))
	}
	fmt.Fprintf(w, "Redis bytes/task\t%s\t≤ 1536 (10-stage task)\n", redis(fmt.Sprintf("%.0f", r.RedisBytesPerTask)))
}

// benchQueryRows are the table's rows about the accept plan and the tenant queries.
func benchQueryRows(w io.Writer, r bench.Result) {
	c := r.Config
	if r.QueriesDuringRollout {
		fmt.Fprintf(w, "tenant queries during the rollout\t%d (%.0f/s, %d errors)\t-\n", r.Queries, r.QueryRateGot, r.QueryErrors)
		fmt.Fprintf(w, "tenant query p50\t%s\t-\n", fmtMs(r.QueryP50Ms))
		fmt.Fprintf(w, "tenant query p99\t%s\t≤ 5ms during the rollout\n", fmtMs(r.QueryP99Ms))
		return
	}
	fmt.Fprintf(w, "accept %d-tenant plan\t%s\t< 300ms (10000 tenants)\n", c.AcceptTenants, fmtMs(r.AcceptMs))
	fmt.Fprintf(w, "tenant queries\t%d in %s (%.0f/s, %d errors)\t-\n", r.Queries, c.QueryDuration, r.QueryRateGot, r.QueryErrors)
	fmt.Fprintf(w, "tenant query p50\t%s\t-\n", fmtMs(r.QueryP50Ms))
	fmt.Fprintf(w, "tenant query p99\t%s\t< 2ms at 2000 req/s\n", fmtMs(r.QueryP99Ms))
}

// fmtUs prints microseconds with one decimal: "12.3µs".
func fmtUs(us float64) string { return strconv.FormatFloat(us, 'f', 1, 64) + "µs" }

func fmtMs(ms float64) string {
	return time.Duration(ms * float64(time.Millisecond)).Round(time.Microsecond).String()
}

// writeAllocProfile writes the allocs profile (every allocation sampled since the process
// started) to path ("" = none).
func writeAllocProfile(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("bench: --memprofile: %w", err)
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("bench: --memprofile: %w", err)
	}
	return f.Close()
}

// startCPUProfile starts a CPU profile into path ("" = none) and returns what stops it.
func startCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("bench: --cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("bench: --cpuprofile: %w", err)
	}
	return func() error { pprof.StopCPUProfile(); return f.Close() }, nil
}
