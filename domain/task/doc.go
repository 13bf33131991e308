// Package task holds the Task aggregate: one tenant's run of a plan's stages.
//
// State machine (docs/design.md §3, plus INTERRUPTED → CANCELLED so an SRE can abandon an interrupted
// tenant instead of being forced to retry it):
//
//	PENDING → RUNNING ──→ COMPLETED     (every stage completed)
//	            ├──→ FAILED        (retries exhausted or permanent error)
//	            ├──→ PAUSED        (pause honoured at a stage boundary)
//	            ├──→ WAITING       (a gate stage waits for an operator's decision)
//	            ├──→ PENDING       (handed back to its plan's queue at a stage boundary: its executor stops cleanly)
//	            └──→ INTERRUPTED   (lease lost, shutdown, or the owner died)
//	WAITING → PENDING       (decided: the next run starts at the gate, with the decision)
//	PENDING → INTERRUPTED   (the in-memory executor shut down before starting a queued task)
//	PENDING | PAUSED | RUNNING | WAITING | INTERRUPTED → CANCELLED
//	PENDING | PAUSED | WAITING | INTERRUPTED | FAILED | CANCELLED → SKIPPED   (an operator's skip: not deployed, no failure)
//	FAILED | CANCELLED | PAUSED | INTERRUPTED | SKIPPED → PENDING   (retry: a new run, attempt+1)
//	PAUSED → PENDING        (resume: the same run)
//
// Invariants:
//   - what each status means (Terminal, Settled, AtRest, Retryable, Cancellable, Skippable) is one table,
//     status.go's rules, with an entry for every status (a test fails for a status without
//     one); Retry and Cancel accept exactly the statuses Retryable and Cancellable report,
//     and the API serves the table (GET /v1/task-statuses) to clients such as the console;
//   - 0 ≤ CurrentStage ≤ len(Stages); a COMPLETED task has run every stage;
//   - Attempt ≥ 1 and grows by one per retry (resume is not a retry);
//   - the attempt ledger only grows, in run order, and every entry has a valid outcome;
//     entries are appended while RUNNING, and by the transitions that end a run cut short
//     inside a stage (below);
//   - stages complete strictly in order;
//   - terminal tasks (COMPLETED, FAILED, CANCELLED, SKIPPED, ROLLED_BACK, ROLLBACK_FAILED) have FinishedAt set;
//   - a pause is its plan's (PausedByPlan: the plan's resume resumes it) or its tenant's (it
//     stays paused until resumed for itself, or by a resume of the plan with all);
//   - a WAITING task has a Wait, at its current stage; no other task has one;
//   - a decision counts only for the stage and run it was taken in (Decision);
//   - the fence epoch never decreases: a write carrying an older epoch is refused (ErrFenced);
//   - every write is a compare-and-set on the version: a store accepts a copy only at the
//     version it holds and advances it by one (ErrConflict otherwise); nothing is
//     last-writer-wins.
//
// Interrupted attempts: every stage attempt that started has a ledger entry. One whose end
// was not seen has outcome interrupted, and its class says why (cancelled, shutdown,
// lease_lost, fenced). It is written by whoever learns of the interruption, with the
// transition that follows it, never by a write of its own:
//   - the run itself, when it is cut short and may still write: an attempt cut by a shutdown
//     or a lost lease is recorded with its exact start (Record, then InterruptStage); a cut
//     during the backoff before the next attempt is derived (InterruptStage);
//   - an operator's cancel of a RUNNING task (Cancel): derived;
//   - the reaper, or an unlock, taking over a task whose run is gone (Abandon): derived, with
//     outcome in_doubt instead (OutcomeInDoubt) when the attempt may have begun, since the
//     lost run may have been inside the call; the next run's call of that stage sends the
//     in-doubt attempt's Idempotency-Key again (InDoubt);
//   - the next run (Retry), for a task stored before interrupted attempts were recorded.
//
// A stop at a stage boundary (a pause, a hand-back, Interrupt) is not an attempt: nothing is
// recorded. A derived entry comes from what is stored, as no attempt start is written: the
// task was RUNNING at stage i in run r, and the last entry of (i, r) tells the attempt (none:
// attempt 1; a failed one: the next). When that next attempt was due (the failed entry's
// EndedAt + Backoff) after the interruption was learned, the run was cut during the backoff:
// the entry says so and that the attempt never started (StartedAt = EndedAt). Otherwise its
// StartedAt is the earliest it could have started (the latest of the run's start, the end of
// the run's last recorded attempt and when it was due), and EndedAt when the writer learned
// of the interruption. A retry clears the last error: the ledger keeps what stopped the run.
//
// A decision at a gate (Decide) is judged by the gate's approvers rule, carried by its stage
// spec (a refused one matches stage.ErrForbidden and changes nothing); a rule counting N
// approvals keeps the first N-1 in the wait (Wait.Approvals, distinct approvers) and the task
// WAITING, and the Nth (or any rejection) is the verdict, with the earlier ones.
//
// Illegal transitions return errors matching ErrInvalidTransition; they never panic.
package task
