package task

import (
	"fmt"
	"time"

	"github.com/executor-dev/executor/domain/stage"
)

// InterruptStage ends a run that was cut short inside its current stage (during an attempt,
// or during the backoff before the next one): RUNNING → INTERRUPTED as Interrupt does, and
// the attempt underway is recorded in the ledger as interrupted, with f's class, unless the
// ledger already says how it ended (the run recorded its own entry first, with its exact
// start). The entry is derived from what is stored (see the package doc): no write per
// attempt start is needed. A run cut at a stage boundary uses Interrupt: no attempt was
// underway.
func (t *Task) InterruptStage(f Failure, now time.Time) error {
	if t.status != Running {
		return t.refuse("interrupt")
	}
	t.recordUnderway(f, now)
	return t.Interrupt(f, now)
}

// recordUnderway appends the entry of the attempt a RUNNING task's run was in when it was cut
// short for f, learned at now, if there is one to record.
func (t *Task) recordUnderway(f Failure, now time.Time) {
	if a, _, ok := t.underway(f, now); ok {
		t.ledger = append(t.ledger, a)
	}
}

// underway derives, from what is stored alone, the ledger entry of the attempt the task's run
// was in at its current stage when it was cut short for f, learned at now (outcome
// interrupted), and whether that attempt may have begun (false when the run was cut during the
// backoff before it); ok is false when there is none to record:
//   - the stage's last entry in this run tells which attempt: none → attempt 1; a failed one →
//     the next (a failed attempt that ends a run is written with the run's end, so a RUNNING
//     task's failed entry was retried); a succeeded or interrupted one, or no stage left to
//     run → nothing;
//   - when that next attempt was due (the failed entry's EndedAt + Backoff) after now, the run
//     was cut during the backoff: the attempt never started, StartedAt = EndedAt = now;
//   - otherwise StartedAt is the earliest the attempt could have started (the latest of the
//     run's start, the end of the run's last recorded attempt, and when the attempt was due),
//     and EndedAt is now, when the writer learned of the interruption (at the latest).
func (t *Task) underway(f Failure, now time.Time) (a Attempt, begun, ok bool) {
	i := t.currentStage
	if t.rollback { // undoing stage currentStage-1, if it has an undo (the others are skipped)
		i--
		if i < 0 || t.stages[i].Undo == nil {
			return Attempt{}, false, false
		}
	}
	if i >= len(t.stages) {
		return Attempt{}, false, false
	}
	now = now.UTC()
	reason := f.Message
	if reason == "" {
		reason = string(f.Class)
	}
	a = Attempt{
		StageIndex: i, Stage: t.stages[i].Name, Run: t.attempt, Attempt: 1,
		EndedAt: now, Outcome: OutcomeInterrupted, Class: f.Class, Undo: t.rollback,
	}
	earliest := t.startedAt
	if n := len(t.ledger); n > 0 && t.ledger[n-1].Run == t.attempt {
		earliest = later(earliest, t.ledger[n-1].EndedAt)
	}
	if last, ok := t.lastAttempt(i, t.attempt); ok {
		if last.Outcome != OutcomeFailed {
			return Attempt{}, false, false
		}
		a.Attempt = last.Attempt + 1
		due := last.EndedAt.Add(last.Backoff)
		if now.Before(due) {
			a.StartedAt = now
			a.Error = fmt.Sprintf("%s (cut during the backoff before attempt %d, due at %s: it never started)",
				reason, a.Attempt, due.UTC().Format(time.RFC3339Nano))
			return a, false, true
		}
		earliest = later(earliest, due)
	}
	if earliest.After(now) {
		earliest = now
	}
	a.StartedAt = earliest.UTC()
	a.Error = reason + " (its end was not seen: startedAt is the earliest it could have started)"
	if !t.heartbeatAt.IsZero() && t.heartbeatAt.Before(a.StartedAt) {
		a.Error = fmt.Sprintf("%s (its end was not seen; the run was last seen at %s, before it was due: it may not have started)",
			reason, t.heartbeatAt.UTC().Format(time.RFC3339Nano))
	}
	return a, true, true
}

// recordStaleCut is the next run's share (Retry): a task that stopped inside a stage without
// the entry of the attempt it was cut in (stored before interrupted attempts were recorded:
// its stage's last entry in that run is a failed attempt awaiting a retry, and its last error
// names that stage) gets it now, derived as underway derives it at the time the task stopped.
func (t *Task) recordStaleCut() {
	if (t.status != Interrupted && t.status != Cancelled) || t.lastError == nil || t.rollback {
		return
	}
	i := t.currentStage
	if i >= len(t.stages) || t.lastError.Stage != t.stages[i].Name {
		return
	}
	if last, ok := t.lastAttempt(i, t.attempt); !ok || last.Outcome != OutcomeFailed || last.Backoff <= 0 {
		return
	}
	stopped := t.updatedAt
	if t.status == Cancelled {
		stopped = t.finishedAt
	}
	t.recordUnderway(*t.lastError, stopped)
}

// lastAttempt returns the last ledger entry of stage i in run run.
func (t *Task) lastAttempt(i, run int) (Attempt, bool) {
	for n := len(t.ledger) - 1; n >= 0; n-- {
		a := t.ledger[n]
		if a.Run < run {
			break // the ledger only grows: earlier entries belong to earlier runs
		}
		if a.Run == run && a.StageIndex == i {
			return a, true
		}
	}
	return Attempt{}, false
}

// cancelledRun is the reason an attempt cut by a cancel without one is recorded with.
var cancelledRun = Failure{Class: stage.ClassCancelled, Message: "cancelled"}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
