package task

import "time"

// A rollback undoes the stages a task completed, newest first: a run like any other (a lease,
// a fence epoch, a checkpoint after every undo, its own attempts in the ledger), whose
// currentStage counts down the stages still applied. A stage without an undo is passed over
// (UndoStage with no attempt). A run is forward or a rollback, never both: turning back
// starts a new run.

// TurnBack turns a RUNNING task whose forward run failed with f into a rollback, under the
// same lease (its plan's onFailure is rollback): a new run (attempt+1) that undoes the stages
// completed, newest first. f stays the last error, what the rollback answers for. RUNNING →
// RUNNING.
func (t *Task) TurnBack(f Failure, now time.Time) error {
	if t.status != Running || t.rollback {
		return t.refuse("turn back")
	}
	t.rollback = true
	t.attempt++
	t.lastError = &f
	t.touch(now)
	t.heartbeatAt = t.updatedAt
	return nil
}

// Rollback starts a rollback of the task, an operator's: a new run (attempt+1) that undoes
// the stages it completed (and still has applied), newest first. COMPLETED | FAILED |
// CANCELLED | PAUSED | INTERRUPTED | ROLLBACK_FAILED → PENDING (Undoable). A task that was
// rolling back when it stopped goes on from the undo it had reached.
func (t *Task) Rollback(now time.Time) error {
	if !t.status.Undoable() {
		return t.refuse("roll back")
	}
	t.recordStaleCut()
	t.rollback = true
	t.status = Pending
	t.attempt++
	t.pauseRequested = false
	t.lastError = nil
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
