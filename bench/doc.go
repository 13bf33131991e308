// Package bench measures the executor's throughput, latency and cost (issues 5 and 19). By
// default it runs the server's wiring in-process (server.Executor: the orchestrator and the
// app.Service use cases, no HTTP) with only the built-in stage kinds, on the embedded
// in-memory store or on a given Redis. With Config.URL it runs the same plans and queries
// through the HTTP API of a running `executor serve` instead (package client), so that the
// two are reported side by side. It measures:
//
//   - stage transitions/s and tasks/s: the wall time from Submit to a terminal plan (the use
//     cases' WaitPlan, or GET /v1/plans/{id}?wait=) of Tenants × Stages noop stages at
//     maxConcurrency Concurrency;
//   - the executor's CPU per transition over that plan phase: in-process, getrusage
//     (RUSAGE_SELF) after less before, the bench driver's Submit and waiting included (small);
//     through the API, the serve's process_cpu_seconds_total from GET /metrics (10 ms
//     resolution), its handling of the bench's requests included;
//   - on Redis, its CPU per transition (INFO cpu used_cpu_sys + used_cpu_user) and its
//     commands per transition (INFO commandstats calls, which count the commands scripts call
//     besides the EVALSHA that runs them), in all and by command, over the plan phase, summed
//     over a cluster's masters; the bench's own INFO calls (a handful) are counted, negligible;
//   - on Redis in-process, round trips per transition: a go-redis hook on the executor's client
//     counts every command sent alone and every pipeline (one round trip each) made by the
//     orchestrator while that plan runs, divided by Tenants × Stages; the bench's own calls
//     (Submit, WaitPlan, INFO) are not counted. Through the API they cannot be counted;
//   - on Redis, bytes per task: INFO memory used_memory less mem_clients_normal (connection
//     buffers) after the plan completed minus before it was submitted, divided by Tenants;
//   - the time to accept a plan of AcceptTenants fresh tenants with one noop stage: the duration
//     of the Submit call (through the API: encoding the body, the request and its answer);
//   - tenant query latency p50/p99: QueryRate tenant-task queries per second on random tenants
//     of the first plan, for QueryDuration, paced by tickers over several goroutines;
//     percentiles are read from the sorted latencies.
//
// With Config.StageDuration the measured plan has the deployment shape (issue 38): sleep
// stages of that duration; the queries run during its rollout instead of after it; the
// makespan is compared with the ideal (Result.MakespanRatio); in-process, a plan of as many new
// tenants as can run at once, with one such stage, measures the memory and goroutines of a
// task in flight; no accept plan runs, and no round trips are counted (a hook on the client
// would change what the full-duplex pipeline costs). Config.Executors wires several executors
// in-process on one Redis.
//
// On the in-memory store the Redis measurements are zero and Result.RedisMetrics is false;
// through the API they are read only when Config.RedisURL names the serve's Redis.
// In-process on Redis every run writes under its own key prefix (Config.Prefix followed by a
// 6-character run id), so runs never collide, and deletes the keys under that prefix, and only
// those, when it ends. Through the API the keys are the serve's: the run deletes nothing, and
// its tenant ids begin with the run id, so that runs against the same serve never share
// tenants.
//
// Speed targets are reported by the CLI (executor bench), never asserted here.
package bench
