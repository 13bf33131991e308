// Package plan holds the Plan aggregate: one rollout of an ordered stage template to many
// tenants, one task per tenant.
//
// State machine (docs/design.md §3, plus Reopen, which lets a tenant retry bring a finished plan back
// to RUNNING so that its status keeps following its tasks):
//
//	SCHEDULED → PENDING → RUNNING ⇄ PAUSED → COMPLETED | FAILED | CANCELLED
//	SCHEDULED | PENDING | RUNNING | PAUSED → CANCELLED
//	FAILED | CANCELLED → RUNNING   (reopen: an operator retried one of its tasks)
//
// Invariants:
//   - the ID is a ULID; 1 ≤ MaxConcurrency ≤ 1000; FailureBudget ≥ 0 (0: no budget);
//   - at least one stage; stage names are unique; at least one task, task ids unique;
//   - the stage template never changes after New;
//   - a rollout in rings (Rollout: 2 … MaxWaves waves; a canary wave is two rings, its first
//     1 … len(tasks)-1 tenants then the rest) places every task in exactly one ring, the task
//     ids in ring order (Bounds); its current ring (Ring) moves only forward:
//     RUNNING → BAKING → CHECKING → AWAITING_APPROVAL → the next ring RUNNING (each step
//     skipped when the wave has no bake, check or approval), the last ring → PASSED; RUNNING,
//     BAKING or CHECKING → HALTED (approve: RUNNING again with its budget waived, or the next
//     ring), any open phase → REJECTED (for good); a task of a later ring starts only once its
//     ring is current; a plan without rings has no ring state;
//   - a wave's analyses (at most MaxAnalyses, never on the last wave) are measured while its
//     ring bakes: the records (RingAnalysis) have one entry per analysis of the ring they
//     belong to, at most MeasurementsKept measurements each; a measurement is recorded only
//     when due (its time, or the bake's end not yet measured: else ErrStale); one past its
//     analysis' limits halts the ring (approve: the next ring); the bake ends only once every
//     analysis measured its end;
//   - 0 ≤ StartRate ≤ MaxStartRate task starts per minute (0: no pacing);
//   - a decision on a ring is judged by the plan's approvers rule (a *stage.ForbiddenError
//     otherwise); with a count, the approvals short of it are kept (Decisions, Partial) and
//     the ring moves on the last one; every decision is kept, at most MaxDecisions;
//   - a notice (Notices) is recorded by the transition it tells of, in the same write, only
//     when a destination wants its event; its ID ("<seq>-<event>") grows with each notice;
//     at most MaxNotices are kept; the once-per-plan ones (NoteOnce) once per detail;
//   - progress is never stored: it is counted from the tasks;
//   - every write is a compare-and-set on the version (ErrConflict): nothing is
//     last-writer-wins.
//
// Illegal transitions return errors matching ErrInvalidTransition; they never panic.
package plan
