package plan

import "time"

func (p *Plan) refuse(action string) error { return &TransitionError{From: p.status, Action: action} }

// Release makes a scheduled plan due: SCHEDULED → PENDING.
func (p *Plan) Release() error {
	if p.status != Scheduled {
		return p.refuse("release")
	}
	p.status = Pending
	return nil
}

// Start begins running tasks: PENDING → RUNNING.
func (p *Plan) Start(now time.Time) error {
	if p.status != Pending {
		return p.refuse("start")
	}
	p.status = Running
	p.startedAt = now.UTC()
	return nil
}

// Pause stops new task starts and asks running tasks to pause: RUNNING → PAUSED (an
// operator's pause: no reason).
func (p *Plan) Pause(now time.Time) error { return p.PauseFor("", now) }

// PauseFor is Pause for a reason an SRE must read before resuming (an executor was lost
// mid-plan): RUNNING → PAUSED, with Reason set to reason. A plan already PAUSED for a reason
// takes the new one (more was lost meanwhile); an operator's pause (no reason) is refused.
func (p *Plan) PauseFor(reason string, now time.Time) error {
	if p.status != Running && (p.status != Paused || p.reason == "" || reason == "") {
		return p.refuse("pause")
	}
	p.status = Paused
	p.reason = reason
	detail := "paused by an operator"
	if reason != "" {
		detail = reason
	}
	p.note(EventPlanPaused, -1, detail, now)
	return nil
}

// Resume lets tasks start again: PAUSED → RUNNING; the pause's reason is cleared.
func (p *Plan) Resume() error {
	if p.status != Paused {
		return p.refuse("resume")
	}
	p.status = Running
	p.reason = ""
	return nil
}

// Complete ends a plan whose every task completed: RUNNING | PAUSED → COMPLETED.
func (p *Plan) Complete(now time.Time) error { return p.end(Completed, "complete", now) }

// Fail ends a plan with failed or interrupted tasks: RUNNING | PAUSED → FAILED.
func (p *Plan) Fail(now time.Time) error { return p.end(Failed, "fail", now) }

func (p *Plan) end(s Status, action string, now time.Time) error {
	if p.status != Running && p.status != Paused {
		return p.refuse(action)
	}
	p.status = s
	p.finishedAt = now.UTC()
	p.reason = "" // a pause's reason says what an SRE must decide; an ended plan asks nothing
	p.note(EventPlanEnded, -1, string(s), now)
	return nil
}

// Cancel ends the plan: SCHEDULED | PENDING | RUNNING | PAUSED → CANCELLED. Only an operator's
// retry of one of its tasks brings it back (Reopen).
func (p *Plan) Cancel(now time.Time) error {
	if p.status.Terminal() {
		return p.refuse("cancel")
	}
	p.status = Cancelled
	p.finishedAt = now.UTC()
	p.reason = ""
	p.note(EventPlanEnded, -1, string(Cancelled), now)
	return nil
}

// Reopen brings an ended plan back to RUNNING because one of its tasks was retried or rolled
// back: a FAILED or CANCELLED one, or a COMPLETED one (its change may prove bad after it
// completed; tenants an operator cancelled or skipped may be retried).
func (p *Plan) Reopen() error {
	if !p.status.Terminal() {
		return p.refuse("reopen")
	}
	p.status = Running
	p.finishedAt = time.Time{}
	return nil
}
