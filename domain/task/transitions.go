package task

import (
	"fmt"
	"slices"
	"time"
)

func (t *Task) refuse(action string) error { return &TransitionError{From: t.status, Action: action} }

func (t *Task) touch(now time.Time) { t.updatedAt = now.UTC() }

// Start begins a run under the lease whose fence epoch is epoch: PENDING → RUNNING.
func (t *Task) Start(epoch uint64, now time.Time) error { return t.StartOn(epoch, "", now) }

// StartOn is Start by a run of the executor named executor, which the task records as the
// one running it.
func (t *Task) StartOn(epoch uint64, executor string, now time.Time) error {
	if t.status != Pending {
		return t.refuse("start")
	}
	if epoch < t.fence {
		return ErrFenced
	}
	t.status = Running
	t.fence = epoch
	t.executor = executor
	t.startedAt = now.UTC()
	t.finishedAt = time.Time{}
	t.touch(now)
	t.heartbeatAt = t.updatedAt
	// Room for one attempt per stage left, so recording them does not regrow the ledger.
	t.ledger = slices.Grow(t.ledger, len(t.stages)-t.currentStage)
	return nil
}

// Beat records that the run owning a RUNNING task is alive.
func (t *Task) Beat(now time.Time) error {
	if t.status != Running {
		return t.refuse("heartbeat")
	}
	t.heartbeatAt = now.UTC()
	return nil
}

// Record appends one stage attempt to the ledger. Only a RUNNING task records attempts, and
// only with a valid outcome (ErrInvalid otherwise).
func (t *Task) Record(a Attempt) error {
	if t.status != Running {
		return t.refuse("record an attempt of")
	}
	if !a.Outcome.Valid() {
		return fmt.Errorf("%w: %s: attempt outcome %q", ErrInvalid, t.id, a.Outcome)
	}
	t.ledger = append(t.ledger, a)
	t.touch(a.EndedAt)
	t.heartbeatAt = t.updatedAt
	return nil
}

// CompleteStage marks stage index done; stages complete strictly in order.
func (t *Task) CompleteStage(index int, now time.Time) error {
	if t.status != Running || t.rollback {
		return t.refuse("complete a stage of")
	}
	if index != t.currentStage || index >= len(t.stages) {
		return ErrStageOutOfOrder
	}
	t.currentStage++
	t.touch(now)
	t.heartbeatAt = t.updatedAt
	return nil
}

// Complete ends a run that ran every stage: RUNNING → COMPLETED.
func (t *Task) Complete(now time.Time) error {
	if t.status != Running || t.rollback {
		return t.refuse("complete")
	}
	if t.currentStage != len(t.stages) {
		return ErrStageOutOfOrder
	}
	t.end(Completed, nil, now)
	return nil
}

// Fail ends the run with f: RUNNING → FAILED, or ROLLBACK_FAILED for a rollback's run (f
// names the undo that failed).
func (t *Task) Fail(f Failure, now time.Time) error {
	if t.status != Running {
		return t.refuse("fail")
	}
	if t.rollback {
		t.end(RollbackFailed, &f, now)
		return nil
	}
	t.end(Failed, &f, now)
	return nil
}

// Interrupt ends the run, at a stage boundary, because its lease, its process or the executor
// went away: RUNNING → INTERRUPTED. No attempt was underway, so none is recorded (a run cut
// inside a stage ends with InterruptStage). The checkpoint stays, so a retry can resume. A
// PENDING task is interrupted when the executor that queued it shuts down before starting it
// (PENDING → INTERRUPTED), so that no task is left waiting for a start that will never come.
func (t *Task) Interrupt(f Failure, now time.Time) error {
	if t.status != Running && t.status != Pending {
		return t.refuse("interrupt")
	}
	t.status = Interrupted
	t.lastError = &f
	t.pauseRequested = false
	t.touch(now)
	return nil
}

// Abandon records that the run owning a RUNNING task is gone (its lease expired and its
// heartbeat is older than the lease TTL, or an operator unlocked its tenant): the caller took
// the task over by bumping its fence epoch to epoch, so the lost run can never write again,
// and the task becomes INTERRUPTED with f as its last error. The attempt the lost run was in
// is derived as InterruptStage derives it, but recorded as in doubt (OutcomeInDoubt): the
// lost run may have been inside the call, so the target may have done the work. An attempt
// the run was still waiting to start (cut during the backoff before it) stays interrupted: it
// never began. RUNNING → INTERRUPTED.
func (t *Task) Abandon(epoch uint64, f Failure, now time.Time) error {
	if t.status != Running {
		return t.refuse("abandon")
	}
	if epoch < t.fence {
		return ErrFenced
	}
	t.fence = epoch
	t.recordInDoubt(f, now)
	return t.Interrupt(f, now)
}

// HandBack gives a RUNNING task back to its plan's queue at a stage boundary, because its
// executor is stopping cleanly: RUNNING → PENDING, its stage, checkpoint and attempt kept, so
// that the next run (on any executor) continues at the stage it would have run next. A
// pause request stays.
func (t *Task) HandBack(now time.Time) error {
	if t.status != Running {
		return t.refuse("hand back")
	}
	t.status = Pending
	t.executor = ""
	t.touch(now)
	return nil
}

// Pause honours a pause at a stage boundary: RUNNING → PAUSED.
func (t *Task) Pause(now time.Time) error {
	if t.status != Running {
		return t.refuse("pause")
	}
	t.status = Paused
	t.pauseRequested = false
	t.touch(now)
	return nil
}

// RequestPause asks a PENDING or RUNNING task to pause at its next stage boundary, for its
// tenant alone: its plan's resume leaves it paused (PausedByPlan). Asking a PAUSED task again
// is a no-op, but makes its pause the tenant's own.
func (t *Task) RequestPause(now time.Time) error { return t.requestPause(false, now) }

// RequestPlanPause is RequestPause asked by the task's plan pausing (PausedByPlan): the plan's
// resume resumes it. A task already paused, or asked to pause, keeps its own pause.
func (t *Task) RequestPlanPause(now time.Time) error {
	if t.status == Paused || t.pauseRequested {
		return nil
	}
	return t.requestPause(true, now)
}

func (t *Task) requestPause(byPlan bool, now time.Time) error {
	switch t.status {
	case Paused:
		t.planPause = false
		return nil
	case Pending, Running:
		t.pauseRequested, t.planPause = true, byPlan
		t.touch(now)
		return nil
	default:
		return t.refuse("pause")
	}
}

// Resume continues a PAUSED task at its next stage (PAUSED → PENDING), or withdraws a pause
// that a PENDING or RUNNING task has not honoured yet.
func (t *Task) Resume(now time.Time) error {
	switch {
	case t.status == Paused:
		t.status = Pending
	case (t.status == Pending || t.status == Running) && t.pauseRequested:
	default:
		return t.refuse("resume")
	}
	t.pauseRequested, t.planPause = false, false
	t.touch(now)
	return nil
}

// Skip ends the task for good without deploying its tenant, by an operator's decision:
// PENDING | PAUSED | WAITING | INTERRUPTED | FAILED | CANCELLED → SKIPPED. The last error
// stays (what made the operator skip it), and so does the checkpoint: the stages it completed
// are still applied (a rollback undoes them; a retry brings it back). A RUNNING task is
// refused (pause or cancel it first: its stage may be half applied), and so is a COMPLETED one.
// A SKIPPED task is no failure: its plan completes, "with exceptions" (docs/design.md).
func (t *Task) Skip(now time.Time) error {
	if !t.status.Skippable() {
		return &TransitionError{From: t.status, Action: "skip", Reason: skipRefusal[t.status]}
	}
	t.end(Skipped, t.lastError, now)
	return nil
}

// skipRefusal says why a status cannot be skipped, where the status alone does not.
var skipRefusal = map[Status]string{
	Running: "its stage may be half applied: pause it (it stops at its next stage boundary) or cancel it, then skip it",
}

// Cancel ends the task for good: PENDING | PAUSED | RUNNING | WAITING | INTERRUPTED →
// CANCELLED. reason, when not nil, becomes the last error. A RUNNING task's run is cut inside
// its current stage: the attempt underway is recorded as interrupted with reason's class
// (cancelled when reason is nil), as InterruptStage does.
func (t *Task) Cancel(reason *Failure, now time.Time) error {
	if !t.status.Cancellable() {
		return t.refuse("cancel")
	}
	if t.status == Running {
		cut := cancelledRun
		if reason != nil {
			cut = *reason
		}
		t.recordUnderway(cut, now)
	}
	if reason == nil {
		reason = t.lastError
	}
	t.end(Cancelled, reason, now)
	return nil
}

// Retry starts a new run at stage from (the stage after the checkpoint, or 0):
// FAILED | CANCELLED | PAUSED | INTERRUPTED | ROLLED_BACK | ROLLBACK_FAILED → PENDING,
// attempt+1. A task rolling back goes on rolling back (from: the stages still applied), but
// a ROLLED_BACK one, with nothing left to undo, runs forward again. The last error is cleared:
// the ledger keeps what stopped the previous run. A task stopped inside a stage whose ledger
// lacks the attempt it was cut in (stored before such attempts were recorded) gets it first.
func (t *Task) Retry(from int, now time.Time) error {
	if !t.status.Retryable() {
		return t.refuse("retry")
	}
	if from < 0 || from > len(t.stages) {
		return ErrStageOutOfOrder
	}
	t.recordStaleCut()
	if t.status == RolledBack {
		t.rollback = false
	}
	t.status = Pending
	t.attempt++
	t.currentStage = from
	t.pauseRequested = false
	t.lastError = nil
	t.finishedAt = time.Time{}
	t.touch(now)
	return nil
}

func (t *Task) end(s Status, f *Failure, now time.Time) {
	t.status = s
	t.undoRequested = false
	t.wait = nil
	t.lastError = f
	t.pauseRequested = false
	t.finishedAt = now.UTC()
	t.touch(now)
}
