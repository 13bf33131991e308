package plan

import (
	"errors"
	"time"

	"github.com/executor-dev/executor/domain/errcode"
	"github.com/executor-dev/executor/domain/stage"
)

// ErrMoreApprovals: the plan's approvers rule asks for more approvals than the ring has
// (with this one): the approval is to be counted (CountApproval), the ring does not move yet.
var ErrMoreApprovals = errors.New("plan: the ring needs more approvals")

// ErrEnoughApprovals: with this approval the ring has as many as its rule asks for: it is to
// be approved on (ApproveRing), not only counted.
var ErrEnoughApprovals = errors.New("plan: the ring has enough approvals")

// alreadyApproved is what an approver who approved the ring already is told.
const alreadyApproved = "you approved this ring already: the plan's rule asks for approvals by distinct approvers"

// MaxDecisions bounds the ring decisions a plan keeps (Decisions): beyond, the oldest go.
const MaxDecisions = 256

// RingDecision is an operator's decision on a ring of the plan.
type RingDecision struct {
	Ring int // the ring's index
	stage.Decision
	// Partial: an approval short of the count the rule asks for, which the ring's approval
	// counted (the ring did not move on it).
	Partial bool
}

// Approvers returns the plan's approvers rule (nil: any operator decides alone): it governs
// the decisions on its rings, and its gates without a rule of their own (a submission copies
// it onto them).
func (p *Plan) Approvers() *stage.Approvers { return p.approvers }

// Decisions returns the decisions on the plan's rings, oldest first.
func (p *Plan) Decisions() []RingDecision { return append([]RingDecision(nil), p.decisions...) }

// checkDecision checks d against the plan's rule, and, for an approval, returns how many
// approvals of the current ring count with it (the partial ones given since its phase began,
// plus d); the same approver twice is stage.ErrAlreadyApproved.
func (p *Plan) checkDecision(d stage.Decision) (int, error) {
	if err := p.approvers.Allows(d); err != nil {
		return 0, errcode.Coded(errcode.Forbidden, err, "")
	}
	if !d.Approved {
		return 0, nil
	}
	partial := p.PartialApprovals()
	for _, e := range partial {
		if e.By == d.By {
			return 0, errcode.Coded(errcode.InvalidTransition, stage.ErrAlreadyApproved, alreadyApproved)
		}
	}
	return len(partial) + 1, nil
}

// PartialApprovals returns the approvals of the current ring that counted toward the plan's
// rule without passing it: the partial ones given since its phase began, oldest last.
func (p *Plan) PartialApprovals() []RingDecision {
	var out []RingDecision
	for i := len(p.decisions) - 1; i >= 0; i-- {
		e := p.decisions[i]
		if e.Ring != p.ring.Index || !e.Partial || e.DecidedAt.Before(p.ring.Since) {
			break
		}
		out = append(out, e)
	}
	return out
}

// CountApproval records approval d of the current ring when the rule asks for more approvals
// than the ring has with it (ErrEnoughApprovals otherwise: approve it on, ApproveRing). The
// ring does not move.
func (p *Plan) CountApproval(d stage.Decision, now time.Time) error {
	if !p.approvable() {
		return p.refuseRing("approve")
	}
	n, err := p.checkDecision(d)
	if err != nil {
		return err
	}
	if n >= p.approvers.Needed() {
		return ErrEnoughApprovals
	}
	p.record(RingDecision{Ring: p.ring.Index, Decision: d, Partial: true}, now)
	return nil
}

// record keeps decision e of a ring, at most MaxDecisions.
func (p *Plan) record(e RingDecision, now time.Time) {
	if e.DecidedAt.IsZero() {
		e.DecidedAt = now
	}
	e.DecidedAt = e.DecidedAt.UTC()
	p.decisions = append(append([]RingDecision(nil), p.decisions...), e)
	if over := len(p.decisions) - MaxDecisions; over > 0 {
		p.decisions = p.decisions[over:]
	}
}

// SubmittedBy returns who submitted the plan (the token's holder; "" for a plan stored
// before actors were recorded).
func (p *Plan) SubmittedBy() string { return p.submittedBy }
