package task

import (
	"time"

	"github.com/executor-dev/executor/domain/errcode"
	"github.com/executor-dev/executor/domain/stage"
)

// Wait describes why a WAITING task waits.
type Wait struct {
	StageIndex int
	Stage      string
	Reason     string // e.g. "approval"
	Message    string // what the operator is asked; may be empty
	Since      time.Time
	// Approvals are the approvals given so far at a gate whose rule asks for several
	// (stage.Approvers.Count), oldest first: fewer than it asks for.
	Approvals []stage.Decision
}

// Verdict is an operator's decision on the stage at StageIndex in run Run of a task.
type Verdict struct {
	StageIndex int
	Run        int
	stage.Decision
	// Earlier are the approvals given before the decision at a gate whose rule asked for
	// several, oldest first (empty otherwise).
	Earlier []stage.Decision
}

// alreadyApproved is what an approver who approved already is told.
const alreadyApproved = "you approved already: the rule asks for approvals by distinct approvers"

// Await parks a run at its current stage until an operator decides: RUNNING → WAITING. The
// run ends (it gives up its worker and lease); Decide makes the task PENDING again, and the
// next run starts at the same stage with the decision (Decision).
func (t *Task) Await(reason, message string, now time.Time) error {
	if t.status != Running {
		return t.refuse("park")
	}
	if t.currentStage >= len(t.stages) {
		return ErrStageOutOfOrder
	}
	t.status = Waiting
	t.pauseRequested = false
	t.wait = &Wait{StageIndex: t.currentStage, Stage: t.stages[t.currentStage].Name, Reason: reason, Message: message, Since: now.UTC()}
	t.touch(now)
	return nil
}

// Decide records an operator's decision on the waiting stage, for this run: WAITING →
// PENDING. A rejection is applied by the stage itself when it runs again (a permanent
// failure), so it is recorded in the ledger and counted like any failure.
//
// The gate's rule (its stage's Approvers) is checked first: a decision it does not allow is
// a *stage.ForbiddenError. At a gate that asks for several approvals, an approval short of
// the count is recorded in the wait (Wait.Approvals) and the task keeps WAITING; the same
// approver twice is stage.ErrAlreadyApproved.
func (t *Task) Decide(d stage.Decision, now time.Time) error {
	if t.status != Waiting {
		return &TransitionError{From: t.status, Action: "decide on", Reason: notAtAGate(t.status)}
	}
	rule := t.stages[t.currentStage].Approvers
	if err := rule.Allows(d); err != nil {
		return errcode.Coded(errcode.Forbidden, err, "")
	}
	d.DecidedAt = d.DecidedAt.UTC()
	earlier := t.wait.Approvals
	if d.Approved {
		for _, a := range earlier {
			if a.By == d.By {
				return errcode.Coded(errcode.InvalidTransition, stage.ErrAlreadyApproved, alreadyApproved)
			}
		}
		if len(earlier)+1 < rule.Needed() {
			w := *t.wait
			w.Approvals = append(append([]stage.Decision(nil), earlier...), d)
			t.wait = &w
			t.touch(now)
			return nil
		}
	}
	t.verdict = &Verdict{StageIndex: t.currentStage, Run: t.attempt, Decision: d, Earlier: earlier}
	t.status = Pending
	t.wait = nil
	t.touch(now)
	return nil
}

// notAtAGate says why a task in status s cannot be decided, and what to do: only a task
// WAITING at a gate can be; one that has not reached its gate yet will (wait), one that ended
// has none left.
func notAtAGate(s Status) string {
	const only = "only a task WAITING at a gate (an approval stage) can be approved or rejected"
	switch {
	case s.Terminal():
		return only + "; this one has ended and waits at no gate"
	case s == Paused || s == Interrupted:
		return only + "; this one is stopped: resume or retry it, then decide once it waits at its gate"
	}
	return only + "; this one has not reached its gate yet: wait until it does (its status then reads WAITING)"
}
