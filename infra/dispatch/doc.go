// Package dispatch is the queue of a RUNNING plan's never-started tasks, with the plan's
// start limits (maxConcurrency, startRate, failureBudget) enforced where the queue is, so that
// they hold plan-wide however many executors start the plan's tasks. Two implementations
// share one method set:
//
//   - Memory is in-process (one mutex): the single-process default. Its state dies with the
//     process.
//   - Redis keeps each plan's queue (ZSET executor:queue:{<planId>}, scored by position),
//     in-flight set (HASH executor:inflight:{<planId>}, taskId -> "<executor>|<claim ms>")
//     and limits and counters (HASH executor:dispatch:{<planId>}) in one hash slot, and
//     changes them only with Lua scripts (scripts/*.lua), each one atomic: every executor on
//     the same Redis shares the queue.
//
// Lifecycle: Push queues a plan's tasks (and stores its limits); executors Claim tasks, each
// claimed task is in flight until Done (its run ended), Return (handed back, to the front of
// the queue) or Release (its executor died: the slot is freed, nothing is queued or counted);
// Remove and Drain take queued tasks out (cancel); Close forgets an ended plan unless work arrived meanwhile (a retry pushed after it settled).
//
// Guarantees (both implementations; for Redis, across every executor on that Redis):
//
//   - Each queued task is claimed by one caller: Claim takes the queue's front task and puts
//     it in flight in one atomic step, and Push never queues a task that is queued or in
//     flight already.
//   - Order: tasks are claimed in Push order; a returned task is claimed next.
//   - MaxConcurrency: Claim takes nothing while that many tasks are in flight plan-wide.
//   - StartRate: the first start is immediate, then one every minute/StartRate (burst 1,
//     to the millisecond); Claim reports the wait instead of a task. Redis measures it by
//     Redis's clock (TIME), so the executors' clocks and their skew do not matter.
//   - FailureBudget: the failed Done that brings the plan's failures to the budget (and any
//     after it) empties the queue and returns what it held, in order, for the caller to
//     cancel. A Done for a task not in flight counts nothing, so a repeated Done is harmless.
//   - Wake-ups: Woken (capacity 1, coalesced) signals that a task may have become claimable
//     (a push, a task handed back, ended or released, an unpause). Memory signals its own
//     changes; a started Redis also forwards every executor's changes, published by the
//     scripts on the pub/sub channel executor:dispatch:wake, and signals after every
//     re-subscription (messages may have been missed). A wake-up is a hint: a claimer also
//     retries after Claim's wait and now and then, since a lost message is never re-sent.
//
// Limits of the Redis implementation:
//
//   - Dispatch needs Redis. While it does not answer every call fails (wrapped, prefix
//     "dispatch:"), so nothing is claimed and no limit can be exceeded; the queue is intact
//     when Redis returns (unless Redis lost its data: then the plan must be pushed again).
//     A call is bounded by its context only when the client honours context deadlines
//     (go-redis ContextTimeoutEnabled); otherwise by the client's read timeout and retries.
//   - A claim whose reply is lost (a timeout after Redis ran the script) stays in flight
//     under the executor's name: the caller saw an error and does not run it, and it holds a
//     slot until the orchestrator reconciles it, which InFlight allows (its executor and its
//     claim time, Since) with Return (run it again) or Release. The same holds for a task
//     whose executor died.
//   - Return, Done and Release do not check which executor holds the task.
//   - A Push of more than 10,000 ids is split into atomic batches of 10,000 (one round trip
//     each); up to 10,000 ids it is one script call plus the SADD of the active set.
//   - The active set executor:dispatching is in another hash slot than the plans' keys: it
//     is written in a command of its own, after the plan's script (Push writes its queue
//     first), and Plans prunes it safely (SREM, then a second look, SADD back when work
//     appeared meanwhile). Every script touches the keys of one plan only: Redis Cluster
//     safe.
package dispatch
