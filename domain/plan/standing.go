package plan

import (
	"fmt"
	"time"
)

// Standing is the part of a plan that changes over its life. A store that holds a plan's
// unchanging part (name, stages, task ids, limits) reads only this again (Restand).
type Standing struct {
	Status     Status
	Phase      Phase
	Reason     string
	Version    uint64
	StartedAt  time.Time
	FinishedAt time.Time
}

// Standing returns the plan's changing part.
func (p *Plan) Standing() Standing {
	return Standing{Status: p.status, Phase: p.phase, Reason: p.reason, Version: p.version,
		StartedAt: p.startedAt, FinishedAt: p.finishedAt}
}

// Restand returns a copy of p standing as s, re-checking what s can break (the status, a
// terminal plan's finishedAt, the phase against the canary) and nothing else: p's unchanging
// part was checked when p was built, and a 100,000-task plan is not re-checked task id by
// task id at each read of its status.
func (p *Plan) Restand(s Standing) (*Plan, error) {
	if !s.Status.Valid() {
		return nil, fmt.Errorf("%w: %s: unknown status %q", ErrInvalid, p.id, s.Status)
	}
	if s.Status.Terminal() && s.FinishedAt.IsZero() {
		return nil, fmt.Errorf("%w: %s: %s without finishedAt", ErrInvalid, p.id, s.Status)
	}
	if !s.Phase.valid(p.canary) {
		return nil, fmt.Errorf("%w: %s: phase %q does not fit canary %+v", ErrInvalid, p.id, s.Phase, p.canary)
	}
	out := p.Clone()
	out.status, out.phase, out.reason, out.version = s.Status, s.Phase, s.Reason, s.Version
	out.startedAt, out.finishedAt = s.StartedAt, s.FinishedAt
	return out, nil
}
