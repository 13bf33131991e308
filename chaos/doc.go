//go:build chaos

// Package chaos is the executor's chaos suite (issues 14 and 31): it runs several `executor
// serve` processes on one private redis-server, each through a fault proxy of its own, sends
// them a continuous workload of plans whose http stages call a recording target, injects faults
// one at a time (kill -9 and empty restart of Redis, SIGSTOP of Redis and of an executor, Redis
// out of memory, connection resets, cuts, black holes and latency, kill -9 of an executor),
// while an operator on call acts as an SRE would (docs/runbook.md) during the faults and after
// them, and checks from the recorded history:
//
//  1. no tenant in flight twice (two stage calls of one tenant at once), no stale caller served
//     (a call whose Executor-Fence epoch is lower than one the target answered before for the
//     task), every call fenced;
//  2. no completed stage run again but the retry of an in-doubt attempt: a later run, after an
//     operator retry, with the completed call's Idempotency-Key, one stage per run at most;
//  3. every acknowledged operator command honoured (a cancel ends its task CANCELLED and no
//     stage of it starts afterwards; a retry gives its task a new run; a submission's plan
//     exists);
//  4. no task stranded: every task ends COMPLETED, FAILED or CANCELLED and every plan ends;
//  5. the API's view equals Redis's: every task's status through every executor's API is the
//     `status` of its Redis hash;
//  6. no task INTERRUPTED under latency alone: no reaped run beat last within a conn-latency
//     window.
//
// TestChaos runs it for CHAOS_DURATION (default 25s: `make test`); `make chaos` runs it for
// 5 minutes. The files, one purpose each:
//
//   - config.go: the run's settings, from the environment;
//   - build.go: building the executor binary;
//   - process.go, cluster.go: executor processes, the Redis and the proxies;
//   - target.go: the recording HTTP target the stages call;
//   - apiclient.go, wire.go: the executors' HTTP API as the workload and the operator use it;
//   - history.go: what happened (faults, operator commands, submissions);
//   - workload.go: plans submitted continuously, cancels of running tenants;
//   - faults.go: the faults and their injection;
//   - operator.go: the SRE, on call during the faults (Watch) and recovering after them;
//   - snapshot.go: the final state, through every executor's API and from Redis;
//   - logscan.go: panics, data races and reapings in the executors' logs;
//   - checks.go: the invariants, computed from the history and the final state;
//   - report.go: the figures printed at the end;
//   - run.go: one run, from the cluster's start to the report.
package chaos
