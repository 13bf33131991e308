//go:build chaos

// Package chaos is the executor's chaos suite (issue 14): it runs several `executor serve`
// processes on one private redis-server, each through a fault proxy of its own, sends them a
// continuous workload of plans whose http stages call a recording target, injects faults one
// at a time (kill -9 and empty restart of Redis, SIGSTOP of Redis and of an executor, Redis
// out of memory, connection resets and cuts, kill -9 of an executor), recovers as an SRE
// would (docs/runbook.md), and checks from the recorded history:
//
//  1. no tenant in flight twice (two stage calls of one tenant at once);
//  2. no completed stage run again without an operator retry in between;
//  3. every acknowledged operator command honoured (a cancel ends its task CANCELLED and no
//     stage of it starts afterwards; a retry gives its task a new run; a submission's plan
//     exists);
//  4. no task stranded: every task ends COMPLETED, FAILED or CANCELLED and every plan ends;
//  5. the API's view equals Redis's: every task's status through every executor's API is the
//     `status` of its Redis hash.
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
//   - operator.go: the SRE's recovery after the run;
//   - snapshot.go: the final state, through every executor's API and from Redis;
//   - logscan.go: panics and data races in the executors' logs;
//   - checks.go: the invariants, computed from the history and the final state;
//   - report.go: the figures printed at the end;
//   - run.go: one run, from the cluster's start to the report.
package chaos
