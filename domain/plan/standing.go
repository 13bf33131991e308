package plan

import (
	"fmt"
	"time"
)

// Standing is the part of a plan that changes over its life. A store that holds a plan's
// unchanging part (name, stages, task ids, limits) reads only this again (Restand).
type Standing struct {
	Status     Status
	Ring       Ring // zero: from Phase (a canary plan stored before rings existed)
	Analysis   RingAnalysis
	Phase      Phase // read only without Ring
	Reason     string
	Version    uint64
	StartedAt  time.Time
	FinishedAt time.Time
	Decisions  []RingDecision // see Plan.Decisions
	Notices    []Notice       // see Plan.Notices
}

// Standing returns the plan's changing part.
func (p *Plan) Standing() Standing {
	return Standing{Status: p.status, Ring: p.ring, Analysis: p.Analysis(), Phase: p.Phase(), Reason: p.reason, Version: p.version,
		StartedAt: p.startedAt, FinishedAt: p.finishedAt, Decisions: p.Decisions(), Notices: p.Notices()}
}

// Restand returns a copy of p standing as s, re-checking what s can break (the status, a
// terminal plan's finishedAt, the ring against the rollout) and nothing else: p's unchanging
// part was checked when p was built, and a 100,000-task plan is not re-checked task id by
// task id at each read of its status.
func (p *Plan) Restand(s Standing) (*Plan, error) {
	if !s.Status.Valid() {
		return nil, fmt.Errorf("%w: %s: unknown status %q", ErrInvalid, p.id, s.Status)
	}
	if s.Status.Terminal() && s.FinishedAt.IsZero() {
		return nil, fmt.Errorf("%w: %s: %s without finishedAt", ErrInvalid, p.id, s.Status)
	}
	out := p.Clone()
	out.status, out.ring, out.analysis, out.reason, out.version = s.Status, s.Ring, s.Analysis, s.Reason, s.Version
	out.startedAt, out.finishedAt = s.StartedAt, s.FinishedAt
	out.decisions = append([]RingDecision(nil), s.Decisions...)
	out.notices, out.noticeSeq = append([]Notice(nil), s.Notices...), lastSeq(s.Notices)
	if p.canary.Tenants > 0 && s.Ring == (Ring{}) {
		var err error
		if out.ring, err = s.Phase.ring(p.createdAt); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, p.id, err)
		}
	} else if p.canary.Tenants == 0 && s.Phase != "" {
		return nil, fmt.Errorf("%w: %s: phase %q without a canary wave", ErrInvalid, p.id, s.Phase)
	}
	if err := out.checkRing(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, p.id, err)
	}
	if err := out.checkAnalysis(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, p.id, err)
	}
	return out, nil
}
