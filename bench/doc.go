// Package bench measures the executor's throughput and latency in-process (issue 5), on the
// embedded in-memory store or on a given Redis. It runs the server's wiring (server.Executor: the
// orchestrator and the app.Service use cases, no HTTP) with only the built-in stage kinds, and
// measures:
//
//   - stage transitions/s and tasks/s: the wall time from Submit to a terminal plan
//     (app.Service.WaitPlan) of Tenants × Stages noop stages at maxConcurrency Concurrency;
//   - on Redis, round trips per transition: a go-redis hook on the executor's client counts every
//     command sent alone and every pipeline (one round trip each) made by the orchestrator while
//     that plan runs, divided by Tenants × Stages; the bench's own calls (Submit, WaitPlan, INFO)
//     are not counted;
//   - on Redis, bytes per task: INFO memory used_memory less mem_clients_normal (connection
//     buffers) after the plan completed minus before it was submitted, divided by Tenants;
//   - the time to accept a plan of AcceptTenants fresh tenants with one noop stage: the duration
//     of the Submit call;
//   - tenant query latency p50/p99: QueryRate app.Service.TenantTask calls per second on random
//     tenants of the first plan, for QueryDuration, paced by tickers over several goroutines;
//     percentiles are read from the sorted latencies.
//
// On the in-memory store the Redis-only measurements are zero and Result.RedisMetrics is false.
// On Redis every run writes under its own key prefix (Config.Prefix followed by a 6-character run id), so runs
// never collide, and deletes the keys under that prefix, and only those, when it ends.
//
// Speed targets are reported by the CLI (executor bench), never asserted here.
package bench
