package plan

import (
	"fmt"

	"github.com/executor-dev/executor/domain/stage"
)

// Then says how a plan goes on once its canary wave has completed.
type Then string

// How a plan goes on after its canary wave.
const (
	ThenAuto    Then = "auto"    // the rest start at once
	ThenApprove Then = "approve" // the rest start once an operator approves
)

// Canary is a plan's canary wave: its first Tenants tenants (in submission order) run first;
// the rest start only when every one of them has completed. Tenants 0: no canary wave.
type Canary struct {
	Tenants int
	Then    Then
}

// Phase is where a plan with a canary wave stands ("" for a plan without one).
type Phase string

// Phases of a plan with a canary wave.
const (
	PhaseCanary           Phase = "CANARY"            // only the canary tenants may start
	PhaseAwaitingApproval Phase = "AWAITING_APPROVAL" // the canaries completed; the rest wait for an operator
	PhasePromoted         Phase = "PROMOTED"          // the rest may start
	PhaseHalted           Phase = "HALTED"            // a canary failed or an operator rejected: the rest never start
)

// PhaseError describes a refused change of a plan's canary phase. It matches
// ErrInvalidTransition.
type PhaseError struct {
	From   Phase
	Action string
}

func (e *PhaseError) Error() string {
	if e.From == "" {
		return fmt.Sprintf("plan: cannot %s a plan without a canary wave", e.Action)
	}
	return fmt.Sprintf("plan: cannot %s a plan in phase %s", e.Action, e.From)
}

// Unwrap returns ErrInvalidTransition.
func (e *PhaseError) Unwrap() error { return ErrInvalidTransition }

// Canary returns the plan's canary wave (Tenants 0: none).
func (p *Plan) Canary() Canary { return p.canary }

// Phase returns the plan's canary phase ("" without a canary wave).
func (p *Plan) Phase() Phase { return p.phase }

// Gated reports whether the plan's tasks past the canary wave may not start yet.
func (p *Plan) Gated() bool {
	return p.phase == PhaseCanary || p.phase == PhaseAwaitingApproval || p.phase == PhaseHalted
}

// CanaryTaskIDs returns the tasks of the canary wave (none without one; shared).
func (p *Plan) CanaryTaskIDs() []string { return p.taskIDs[:p.canary.Tenants] }

// RestTaskIDs returns the tasks after the canary wave (every task without one; shared).
func (p *Plan) RestTaskIDs() []string { return p.taskIDs[p.canary.Tenants:] }

// PassCanary records that every canary task completed: CANARY → PROMOTED (then auto) or
// AWAITING_APPROVAL (then approve). It reports whether the rest may start now.
func (p *Plan) PassCanary() (promoted bool, err error) {
	if p.phase != PhaseCanary || p.status.Terminal() {
		return false, p.refusePhase("pass the canary wave of")
	}
	if p.canary.Then == ThenAuto {
		p.phase = PhasePromoted
		return true, nil
	}
	p.phase = PhaseAwaitingApproval
	return false, nil
}

// Approve lets the rest of the plan start: CANARY | AWAITING_APPROVAL → PROMOTED. Approving
// while canaries still run promotes early: that is the operator's call.
func (p *Plan) Approve() error {
	if (p.phase != PhaseCanary && p.phase != PhaseAwaitingApproval) || p.status.Terminal() {
		return p.refusePhase("approve")
	}
	p.phase = PhasePromoted
	return nil
}

// Halt stops the plan after its canary wave for good (a canary failed, or an operator
// rejected): CANARY | AWAITING_APPROVAL → HALTED. The rest never start.
func (p *Plan) Halt() error {
	if (p.phase != PhaseCanary && p.phase != PhaseAwaitingApproval) || p.status.Terminal() {
		return p.refusePhase("halt")
	}
	p.phase = PhaseHalted
	return nil
}

func (p *Plan) refusePhase(action string) error {
	if p.status.Terminal() {
		return p.refuse(action)
	}
	return &PhaseError{From: p.phase, Action: action}
}

// Validate checks the canary wave of a plan of tasks tasks as New does: a *stage.FieldError
// naming "canary.tenants" or "canary.then", matching ErrInvalid; nil without a canary wave.
func (c Canary) Validate(tasks int) error {
	return c.check(tasks, func(field, format string, args ...any) error {
		return &stage.FieldError{Field: field, Reason: fmt.Sprintf(format, args...), Err: ErrInvalid}
	})
}

func (c Canary) check(tasks int, bad func(field, format string, args ...any) error) error {
	if c.Tenants == 0 && c.Then == "" {
		return nil
	}
	if c.Tenants < 1 || c.Tenants >= tasks {
		return bad("canary.tenants", "must be between 1 and the number of tenants less one (%d)", tasks-1)
	}
	if c.Then != ThenAuto && c.Then != ThenApprove {
		return bad("canary.then", "must be %q or %q", ThenAuto, ThenApprove)
	}
	return nil
}

func (ph Phase) valid(c Canary) bool {
	if c.Tenants == 0 {
		return ph == ""
	}
	switch ph {
	case PhaseCanary, PhaseAwaitingApproval, PhasePromoted, PhaseHalted:
		return true
	}
	return false
}
