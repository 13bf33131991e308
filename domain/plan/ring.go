package plan

import (
	"fmt"
	"time"

	"github.com/executor-dev/executor/domain/errcode"
	"github.com/executor-dev/executor/domain/stage"
)

// RingPhase is where the current ring of a rolling plan stands.
type RingPhase string

// Ring phases. The rings before the current one have passed; those after it are pending.
const (
	RingRunning          RingPhase = "RUNNING"           // its tasks may start
	RingBaking           RingPhase = "BAKING"            // its tasks completed; it waits its bake
	RingChecking         RingPhase = "CHECKING"          // its health check runs
	RingAwaitingApproval RingPhase = "AWAITING_APPROVAL" // baked and checked; the next ring waits for an operator
	RingHalted           RingPhase = "HALTED"            // failures crossed its budget, or its check failed: nothing new starts
	RingRejected         RingPhase = "REJECTED"          // an operator rejected the plan: the rest never start
	RingPassed           RingPhase = "PASSED"            // the last ring completed
)

// Ring is where a rolling plan stands: its current ring and that ring's phase.
type Ring struct {
	Index int
	Phase RingPhase
	Since time.Time // when Phase began: a bake ends at Since + the wave's Bake
	// HaltedIn is the phase a HALTED ring was halted in (RUNNING: its failures crossed the
	// budget; CHECKING: its check failed); Halt says why, for SREs.
	HaltedIn RingPhase
	Halt     string
	// Waived: an operator approved the ring on past its failure budget; it is not judged
	// against it again.
	Waived bool
	// Analysis: the HALTED ring was halted by its analysis (its bake cut short); an approval
	// makes way for the next ring, as after a failed check.
	Analysis bool
}

// Ring returns where the plan's rollout stands (the zero Ring without waves).
func (p *Plan) Ring() Ring { return p.ring }

// Rollout returns the plan's rings (no waves: none).
func (p *Plan) Rollout() Rollout { return p.rollout }

// RingTaskIDs returns the tasks of ring k (shared; do not modify).
func (p *Plan) RingTaskIDs(k int) []string {
	b := p.rollout.Bounds
	return p.taskIDs[b[k]:b[k+1]]
}

// StartableTaskIDs returns the tasks that may be queued now: every task without waves; none
// while the current ring is halted or rejected; otherwise those of the rings up to the
// current one (baking or awaiting approval too: a task of its own retried meanwhile may run)
// (shared; do not modify).
func (p *Plan) StartableTaskIDs() []string {
	switch {
	case !p.rollout.Enabled():
		return p.taskIDs
	case p.ring.Phase == RingHalted || p.ring.Phase == RingRejected:
		return nil
	}
	return p.taskIDs[:p.rollout.Bounds[p.ring.Index+1]]
}

// lastRing reports whether the current ring is the last.
func (p *Plan) lastRing() bool { return p.ring.Index == len(p.rollout.Waves)-1 }

// RingError describes a refused change of a plan's ring. It matches ErrInvalidTransition.
type RingError struct {
	Ring   Ring
	Action string
}

func (e *RingError) Error() string {
	if e.Ring.Phase == "" {
		return fmt.Sprintf("plan: cannot %s a plan without waves (nor a canary wave)", e.Action)
	}
	return fmt.Sprintf("plan: cannot %s a plan whose ring %d is %s", e.Action, e.Ring.Index, e.Ring.Phase)
}

// Unwrap returns ErrInvalidTransition.
func (e *RingError) Unwrap() error { return ErrInvalidTransition }

// Code is errcode.InvalidTransition.
func (e *RingError) Code() errcode.Code { return errcode.InvalidTransition }

// Detail is the refused change, without the context that wraps it.
func (e *RingError) Detail() string { return e.Error() }

func (p *Plan) refuseRing(action string) error {
	if p.status.Terminal() {
		return p.refuse(action)
	}
	return &RingError{Ring: p.ring, Action: action}
}

// inRing reports whether the plan rolls out, has not ended and its current ring is index in
// one of phases.
func (p *Plan) inRing(index int, phases ...RingPhase) bool {
	if !p.rollout.Enabled() || p.status.Terminal() || p.ring.Index != index {
		return false
	}
	for _, ph := range phases {
		if p.ring.Phase == ph {
			return true
		}
	}
	return false
}

// RingCompleted records that ring index's tasks all completed (within its budget): it bakes
// (BAKING) when it has a bake or a check; else it goes on as its wave's Then says. The last
// ring PASSES. It reports whether a new ring started (its tasks may be queued).
func (p *Plan) RingCompleted(index int, now time.Time) (started bool, err error) {
	if !p.inRing(index, RingRunning) {
		return false, p.refuseRing("complete ring " + fmt.Sprint(index) + " of")
	}
	w := p.rollout.Waves[index]
	switch {
	case p.lastRing():
		p.setRing(index, RingPassed, now)
		return false, nil
	case w.Bake > 0 || w.Health != nil || len(w.Analysis) > 0:
		p.setRing(index, RingBaking, now)
		p.beginAnalysis(index, now)
		return false, nil
	}
	return p.then(now), nil
}

// BakeEnds returns when the current ring's bake ends (zero unless it is BAKING).
func (p *Plan) BakeEnds() time.Time {
	if !p.rollout.Enabled() || p.ring.Phase != RingBaking {
		return time.Time{}
	}
	return p.ring.Since.Add(p.rollout.Waves[p.ring.Index].Bake)
}

// BakeOver records that ring index's bake is over (at now, no earlier than BakeEnds, and
// each of its analyses measured its end): it is CHECKING when its wave has a health check,
// else it goes on as Then says. It reports whether a new ring started.
func (p *Plan) BakeOver(index int, now time.Time) (started bool, err error) {
	if !p.inRing(index, RingBaking) || now.Before(p.BakeEnds()) || !p.analysisPassed() {
		return false, p.refuseRing("end the bake of ring " + fmt.Sprint(index) + " of")
	}
	if p.rollout.Waves[index].Health != nil {
		p.setRing(index, RingChecking, now)
		return false, nil
	}
	return p.then(now), nil
}

// CheckPassed records that ring index's health check passed: it goes on as Then says. It
// reports whether a new ring started.
func (p *Plan) CheckPassed(index int, now time.Time) (started bool, err error) {
	if !p.inRing(index, RingChecking) {
		return false, p.refuseRing("pass the check of ring " + fmt.Sprint(index) + " of")
	}
	return p.then(now), nil
}

// RecheckRing restarts the check of ring index (CHECKING since now): the executor making it
// was lost before it recorded the outcome.
func (p *Plan) RecheckRing(index int, now time.Time) error {
	if !p.inRing(index, RingChecking) {
		return p.refuseRing("check again ring " + fmt.Sprint(index) + " of")
	}
	p.setRing(index, RingChecking, now)
	return nil
}

// HaltRing halts ring index (its failures crossed its budget while RUNNING or BAKING, or its
// check failed while CHECKING): nothing new starts until an operator approves (the ring goes
// on) or rejects (the rest is cancelled). why is for SREs: the ring, the failures, the
// threshold.
func (p *Plan) HaltRing(index int, why string, now time.Time) error {
	if !p.inRing(index, RingRunning, RingBaking, RingChecking) {
		return p.refuseRing("halt ring " + fmt.Sprint(index) + " of")
	}
	p.halt(index, why, now)
	return nil
}

// halt halts ring index, where it stands, for why.
func (p *Plan) halt(index int, why string, now time.Time) {
	from := p.ring.Phase
	p.setRing(index, RingHalted, now)
	p.ring.HaltedIn, p.ring.Halt = from, why
	p.note(EventRingHalted, index, why, now)
}

// then moves past the current ring: to the next RUNNING (auto), or AWAITING_APPROVAL.
func (p *Plan) then(now time.Time) (started bool) {
	if p.rollout.Waves[p.ring.Index].Then == ThenApprove {
		p.setRing(p.ring.Index, RingAwaitingApproval, now)
		p.note(EventAwaitingApproval, p.ring.Index, p.rollout.Waves[p.ring.Index].Name, now)
		return false
	}
	p.setRing(p.ring.Index+1, RingRunning, now)
	return true
}

func (p *Plan) setRing(index int, phase RingPhase, now time.Time) {
	p.ring = Ring{Index: index, Phase: phase, Since: now.UTC()}
}

// ApproveRing is an operator's approval d: a ring AWAITING_APPROVAL, RUNNING, BAKING or
// CHECKING (early) makes way for the next ring, RUNNING; a ring HALTED while it ran goes on
// RUNNING, its budget waived; one HALTED by its check or its analysis makes way for the next
// ring. The last ring can only be approved on from HALTED. It reports whether a new ring
// started. The plan's approvers rule is checked first (a *stage.ForbiddenError); when it
// asks for more approvals than the ring has with d, nothing changes and the error is
// ErrMoreApprovals (count d with CountApproval). The decision is kept (Decisions).
func (p *Plan) ApproveRing(d stage.Decision, now time.Time) (started bool, err error) {
	if !p.approvable() {
		return false, p.refuseRing("approve")
	}
	n, err := p.checkDecision(d)
	if err != nil {
		return false, err
	}
	if n < p.approvers.Needed() {
		return false, ErrMoreApprovals
	}
	i := p.ring.Index
	p.record(RingDecision{Ring: i, Decision: d}, now)
	if p.inRing(i, RingHalted) && p.ring.HaltedIn != RingChecking && !p.ring.Analysis {
		p.setRing(i, RingRunning, now)
		p.ring.Waived = true
		return false, nil
	}
	p.setRing(i+1, RingRunning, now)
	return true, nil
}

// approvable reports whether the current ring may be approved (ApproveRing).
func (p *Plan) approvable() bool {
	i := p.ring.Index
	return (p.inRing(i, RingHalted) && p.ring.HaltedIn != RingChecking && !p.ring.Analysis) ||
		(p.inRing(i, RingHalted, RingAwaitingApproval, RingRunning, RingBaking, RingChecking) && !p.lastRing())
}

// RejectRing is an operator's rejection d: the rings after the current one (and its own
// tasks not started) never start: REJECTED. The plan's approvers rule is checked first (a
// *stage.ForbiddenError); the decision is kept (Decisions).
func (p *Plan) RejectRing(d stage.Decision, now time.Time) error {
	if !p.inRing(p.ring.Index, RingRunning, RingBaking, RingChecking, RingAwaitingApproval, RingHalted) {
		return p.refuseRing("reject")
	}
	d.Approved = false
	if _, err := p.checkDecision(d); err != nil {
		return err
	}
	p.record(RingDecision{Ring: p.ring.Index, Decision: d}, now)
	p.setRing(p.ring.Index, RingRejected, now)
	return nil
}

// RingPhaseOf returns the phase of ring k as SREs read it: PASSED before the current ring,
// PENDING after it, the current ring's own phase (PASSED once the plan completed).
func (p *Plan) RingPhaseOf(k int) RingPhase {
	switch {
	case k < p.ring.Index:
		return RingPassed
	case k > p.ring.Index:
		return RingPending
	case p.status == Completed:
		return RingPassed
	}
	return p.ring.Phase
}

// RingPending is the phase of a ring after the current one.
const RingPending RingPhase = "PENDING"

func (ph RingPhase) valid() bool {
	switch ph {
	case RingRunning, RingBaking, RingChecking, RingAwaitingApproval, RingHalted, RingRejected, RingPassed:
		return true
	}
	return false
}

// checkRing checks the ring state against the rollout.
func (p *Plan) checkRing() error {
	if !p.rollout.Enabled() {
		if p.ring != (Ring{}) {
			return fmt.Errorf("ring %+v without waves", p.ring)
		}
		return nil
	}
	if p.ring.Index < 0 || p.ring.Index >= len(p.rollout.Waves) || !p.ring.Phase.valid() {
		return fmt.Errorf("ring %d %q does not fit %d waves", p.ring.Index, p.ring.Phase, len(p.rollout.Waves))
	}
	if p.ring.Phase == RingHalted && p.ring.HaltedIn == "" {
		return fmt.Errorf("ring %d HALTED without the phase it was halted in", p.ring.Index)
	}
	return nil
}

// RingData is what the templates of ring k's check and analyses see: the plan's id, and as
// .Params the wave's name (wave) and the ring's index (ring); the caller adds the executor's
// URL and the secrets. A ring's templates read no tenant's or task's data.
func (r Rollout) RingData(planID string, k int) stage.Data {
	return stage.Data{PlanID: planID, Params: map[string]any{"wave": r.Waves[k].Name, "ring": k}}
}

// RolloutStopped reports whether an operator, or a failure budget, stopped the plan's rollout:
// its current ring is HALTED or REJECTED (a canary plan's phase HALTED), so the tasks not
// started never start. A plan so stopped whose tasks all settled ends CANCELLED, not
// COMPLETED, even when some tasks completed.
func (p *Plan) RolloutStopped() bool {
	return p.rollout.Enabled() && (p.ring.Phase == RingHalted || p.ring.Phase == RingRejected)
}
