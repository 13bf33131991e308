package task

import "time"

// recordInDoubt appends the entry of the attempt a RUNNING task's lost run was in (underway),
// as in doubt when that attempt may have begun: the lost run may have been inside the call.
// One the run was still waiting to start (cut during its backoff) stays interrupted.
func (t *Task) recordInDoubt(f Failure, now time.Time) {
	a, begun, ok := t.underway(f, now)
	if !ok {
		return
	}
	if begun {
		a.Outcome = OutcomeInDoubt
	}
	t.ledger = append(t.ledger, a)
}

// InDoubt reports whether the next call of stage stageIndex (of its undo, while the task rolls
// back) must send the Idempotency-Key of
// an earlier attempt whose outcome is in doubt, and returns that attempt: its Run is the run
// whose key to send (stage.Request's KeyRun).
//
// It is so when the stage's latest attempt in the ledger, over all runs, is in doubt: the
// target may have done the work, and no later attempt of the stage succeeded or failed with an
// answer. A run whose stage call carried an in-doubt attempt's key sent that key, not its own:
// when its attempt is in doubt too, the attempt returned is the first of that chain (walking
// back over runs while the stage's latest attempt of the earlier runs is in doubt), whose key
// every later one sent. Any other latest outcome (succeeded, failed, interrupted), or no
// attempt of the stage, returns false: the next call sends its own run's key.
func (t *Task) InDoubt(stageIndex int) (Attempt, bool) {
	n := t.latestOfStage(stageIndex, len(t.ledger))
	if n < 0 || t.ledger[n].Outcome != OutcomeInDoubt {
		return Attempt{}, false
	}
	for {
		// the stage's latest attempt of the runs before this one's: what this run's call read
		before := n
		for before > 0 && t.ledger[before-1].Run == t.ledger[n].Run {
			before--
		}
		prev := t.latestOfStage(stageIndex, before)
		if prev < 0 || t.ledger[prev].Outcome != OutcomeInDoubt {
			return t.ledger[n], true
		}
		n = prev
	}
}

// latestOfStage returns the index of the last ledger entry of stage i among the first end
// entries, in the task's direction (of the stage's undo while it rolls back), or -1.
func (t *Task) latestOfStage(i, end int) int {
	for n := end - 1; n >= 0; n-- {
		if t.ledger[n].StageIndex == i && t.ledger[n].Undo == t.rollback {
			return n
		}
	}
	return -1
}
