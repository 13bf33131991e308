package plan

import (
	"fmt"
	"time"

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
// the rest start only when every one of them has completed, or when an operator approves. A
// canary's failure halts the plan (PhaseHalted): the rest wait, PENDING, for an operator's
// approve (they start once the wave completes) or reject (they are cancelled). Tenants 0: no
// canary wave. It is shorthand for a Rollout of two rings, "canary" and "rest".
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
	// PhaseHalted: a canary failed (nothing new starts, the rest wait PENDING: an operator's
	// approve goes on, its reject cancels them) or an operator rejected (the rest are
	// cancelled, never started).
	PhaseHalted Phase = "HALTED"
)

// Canary returns the plan's canary wave (Tenants 0: none).
func (p *Plan) Canary() Canary { return p.canary }

// Phase returns the canary phase the plan's rings read as ("" without a canary wave): ring 0
// running, baking or checking is CANARY; AWAITING_APPROVAL; ring 1 is PROMOTED; halted or
// rejected is HALTED.
func (p *Plan) Phase() Phase {
	if p.canary.Tenants == 0 {
		return ""
	}
	switch {
	case p.ring.Phase == RingHalted || p.ring.Phase == RingRejected:
		return PhaseHalted
	case p.ring.Index > 0:
		return PhasePromoted
	case p.ring.Phase == RingAwaitingApproval:
		return PhaseAwaitingApproval
	}
	return PhaseCanary
}

// ring is the Ring a canary phase stored before rings existed stands for (a HALTED canary
// plan then had its rest cancelled: REJECTED).
func (ph Phase) ring(since time.Time) (Ring, error) {
	switch ph {
	case PhaseCanary:
		return Ring{Index: 0, Phase: RingRunning, Since: since}, nil
	case PhaseAwaitingApproval:
		return Ring{Index: 0, Phase: RingAwaitingApproval, Since: since}, nil
	case PhasePromoted:
		return Ring{Index: 1, Phase: RingRunning, Since: since}, nil
	case PhaseHalted:
		return Ring{Index: 0, Phase: RingRejected, Since: since}, nil
	}
	return Ring{}, fmt.Errorf("phase %q is not a canary phase", ph)
}

// rollout is the two rings the canary wave stands for: the canary tenants (any failure halts;
// no bake), then the rest.
func (c Canary) rollout(tasks int) Rollout {
	return Rollout{
		Waves: []Wave{
			{Name: "canary", Size: Share{Count: c.Tenants}, Then: c.Then, FailureBudget: &Share{}},
			{Name: "rest", Rest: true, Then: ThenAuto},
		},
		Order:  OrderSubmission,
		Bounds: []int{0, c.Tenants, tasks},
	}
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
