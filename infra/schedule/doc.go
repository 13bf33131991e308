// Package schedule starts scheduled plans at their time (docs/design.md §5), exactly once across
// executor instances. Two schedulers share one contract (SetDue, Start, Stop, Schedule,
// Unschedule) and call a Due callback with a plan id whose startAt has come. Due is set with
// SetDue before Start rather than given to the constructor: what it starts (the orchestrator)
// takes the scheduler as its own, so it is built after it.
//
//   - Memory is in-process: a timer heap with one goroutine and one time.Timer armed for the
//     earliest entry. It serves a single executor; its entries die with the process.
//   - Redis keeps the entries in the ZSET executor:schedule (plan id by startAt in Unix
//     milliseconds), shared by every executor on the same Redis, so they survive restarts
//     and any instance may start any plan.
//
// Guarantees of the Redis scheduler:
//
//   - Exactly-once start. An instance takes due entries with one atomic script (claim.lua:
//     ZRANGEBYSCORE up to now, then each taken entry is re-scored to now+ClaimTTL), so two
//     instances never claim the same entry at the same time. The re-score is a visibility
//     timeout: the entry is removed (acknowledged) only after Due returned nil, and an entry
//     whose claimer crashed, or whose Due failed, becomes due again after ClaimTTL and is
//     claimed again, by any instance. A second start is then harmless because Due checks the
//     plan's status first (a started or cancelled plan needs no start): Due is delivered at
//     least once, the plan is started exactly once.
//   - Timeliness. An entry is claimed no earlier than its startAt, by each executor's local
//     clock (executors' clocks are assumed NTP-synced; a skew only moves the start by the
//     skew). Lateness is the local timer's plus one Redis round trip (the claim).
//   - Wake-up. A Schedule that makes its entry the earliest one publishes its startAt on
//     executor:schedule:wake (schedule.lua, in the same atomic step as the ZADD), and every
//     running instance re-arms its timer; a periodic check every Fallback (and a check after
//     each pub/sub reconnect) catches entries whose message was missed or never sent.
//   - Redis is the shared arbiter of "exactly once", so a scheduled start needs Redis: while
//     it is away, a due plan is not started, and starts when Redis returns. Schedule does
//     not fail its caller during an outage: the entry is kept in memory and written as soon
//     as Redis answers (retried at every pass of the loop, at least every 250 ms while
//     something waits). Entries still held in memory when the scheduler stops are lost.
//
// Every Redis key comes from package rediskey; every script is Redis Cluster safe (one key
// per call).
//
// Both run one contract suite, infra/schedule/schedtest: what the orchestrator's Scheduler
// port asks of every scheduler.
package schedule
