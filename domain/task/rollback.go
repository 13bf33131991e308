package task

import "time"

// A rollback undoes the stages a task completed, newest first: a run like any other (a lease,
// a fence epoch, a checkpoint after every undo, its own attempts in the ledger), whose
// currentStage counts down the stages still applied. A stage without an undo is passed over
// (UndoStage with no attempt). A run is forward or a rollback, never both: turning back
// starts a new run.

// TurnBack turns a RUNNING task's forward run into a rollback, under the same lease: a new
// run (attempt+1) that undoes the stages completed, newest first. f, when not nil, is the
// failure that set it off (its plan's onFailure is rollback, or a rollback was requested
// while the stage ran), which stays the last error; nil: an operator's request
// (RollbackRequested) at a stage boundary. RUNNING → RUNNING.
func (t *Task) TurnBack(f *Failure, now time.Time) error {
	if t.status != Running || t.rollback {
		return t.refuse("turn back")
	}
	t.rollback = true
	t.undoRequested = false
	t.attempt++
	if f != nil {
		c := *f
		t.lastError = &c
	}
	t.touch(now)
	t.heartbeatAt = t.updatedAt
	return nil
}

// Rollback is an operator's rollback of the task: a new run (attempt+1) that undoes the stages
// it completed (and still has applied), newest first; a FAILED task keeps its last error (what
// the rollback answers for). COMPLETED | FAILED | CANCELLED | PAUSED
// | INTERRUPTED | ROLLBACK_FAILED → PENDING; a task that was rolling back when it stopped goes
// on from the undo it had reached. A RUNNING task (running forward) stays RUNNING with the
// rollback requested (RollbackRequested): its run turns back itself, as it holds the tenant.
// A task that completed no stage has nothing to undo: refused (ErrInvalidTransition).
func (t *Task) Rollback(now time.Time) error {
	if t.status == RolledBack {
		return &TransitionError{From: t.status, Action: "roll back", Reason: "nothing is left to undo; a retry runs it forward again"}
	}
	if !t.status.Undoable() || (t.status == Running && t.rollback) {
		return t.refuse("roll back")
	}
	if !t.rollback && t.currentStage == 0 {
		return &TransitionError{From: t.status, Action: "roll back", Reason: "it completed no stage: nothing to undo"}
	}
	if t.status == Running {
		t.undoRequested = true
		t.touch(now)
		return nil
	}
	t.recordStaleCut()
	if t.status != Failed { // a FAILED task's failure stays what its rollback answers for
		t.lastError = nil
	}
	t.undoRequested = false
	t.rollback = true
	t.status = Pending
	t.attempt++
	t.pauseRequested = false
	t.finishedAt = time.Time{}
	t.touch(now)
	return nil
}

// UndoStage records that stage index, the newest still applied, is undone (its undo ran, or
// it has none): the task rolls back one stage further.
func (t *Task) UndoStage(index int, now time.Time) error {
	if t.status != Running || !t.rollback {
		return t.refuse("undo a stage of")
	}
	if index != t.currentStage-1 {
		return ErrStageOutOfOrder
	}
	t.currentStage--
	t.touch(now)
	t.heartbeatAt = t.updatedAt
	return nil
}

// RolledBack ends a rollback that undid every stage: RUNNING → ROLLED_BACK. The last error
// stays (the failure a plan's onFailure rolled the task back for).
func (t *Task) RolledBack(now time.Time) error {
	if t.status != Running || !t.rollback {
		return t.refuse("end the rollback of")
	}
	if t.currentStage != 0 {
		return ErrStageOutOfOrder
	}
	t.end(RolledBack, t.lastError, now)
	return nil
}
