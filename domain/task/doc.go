// Package task holds the Task aggregate: one tenant's run of a plan's stages.
//
// State machine (DESIGN §3, plus INTERRUPTED → CANCELLED so an SRE can abandon an interrupted
// tenant instead of being forced to retry it):
//
//	PENDING → RUNNING → COMPLETED
//	            ├──→ FAILED        (retries exhausted or permanent error)
//	            ├──→ PAUSED        (pause honoured at a stage boundary)
//	            └──→ INTERRUPTED   (lease lost, shutdown, or the owner died)
//	            └──→ WAITING       (a gate stage waits for an operator's decision)
//	WAITING → PENDING       (decided: the next run starts at the gate, with the decision)
//	PENDING → INTERRUPTED   (the executor shut down before starting a queued task)
//	RUNNING → PENDING       (handed back to its plan's queue at a stage boundary: its executor stops cleanly)
//	PENDING | PAUSED | RUNNING | WAITING | INTERRUPTED → CANCELLED
//	FAILED | CANCELLED | PAUSED | INTERRUPTED → PENDING   (retry; resume from PAUSED)
//
// Invariants:
//   - 0 ≤ CurrentStage ≤ len(Stages); a COMPLETED task has run every stage;
//   - Attempt ≥ 1 and grows by one per retry (resume is not a retry);
//   - the attempt ledger only grows, and only while RUNNING;
//   - stages complete strictly in order;
//   - terminal tasks (COMPLETED, FAILED, CANCELLED) have FinishedAt set;
//   - a WAITING task has a Wait, at its current stage; no other task has one;
//   - a decision counts only for the stage and run it was taken in (Decision);
//   - the fence epoch never decreases: a write carrying an older epoch is refused (ErrFenced);
//   - every write is a compare-and-set on the version: a store accepts a copy only at the
//     version it holds and advances it by one (ErrConflict otherwise); nothing is
//     last-writer-wins.
//
// Illegal transitions return errors matching ErrInvalidTransition; they never panic.
package task
