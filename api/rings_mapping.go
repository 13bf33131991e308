package api

import (
	"strings"
	"time"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/wire"
)

// ringsFrom is a plan's rollout as returned at now, nil without waves.
func ringsFrom(p *plan.Plan, now time.Time) *wire.Rings {
	r := p.Rollout()
	if !r.Enabled() {
		return nil
	}
	cur := p.Ring()
	out := &wire.Rings{Order: string(r.Order), Seed: r.Seed, Current: cur.Index, Waves: make([]wire.RingView, len(r.Waves))}
	if r.FailureBudget != nil {
		out.FailureBudget = r.FailureBudget.String()
	}
	if cur.Phase == plan.RingHalted || cur.Phase == plan.RingRejected {
		reason := cur.Halt
		if cur.Phase == plan.RingRejected {
			reason = "rejected by an operator"
		}
		out.Halted = &wire.RingHalt{Ring: cur.Index, Wave: r.Waves[cur.Index].Name, Reason: reason}
	}
	for k, w := range r.Waves {
		v := wire.RingView{Name: w.Name, Size: w.Size.String(), Tenants: len(p.RingTaskIDs(k)),
			State: strings.ToLower(string(p.RingPhaseOf(k))), MaxConcurrency: w.MaxConcurrency,
			Then: string(w.Then), FailureBudget: r.Budget(k).String()}
		v.Tolerates = r.Budget(k).Tolerated(v.Tenants)
		if w.Rest {
			v.Size = "rest"
		}
		if w.Bake > 0 {
			v.Bake = w.Bake.String()
		}
		if w.Health != nil {
			v.Health = &wire.StageRef{Name: w.Health.Name, Kind: w.Health.Kind}
		}
		v.Analysis = analysisViews(p, k, now)
		if k == cur.Index {
			v.Since = timePtr(cur.Since)
			if ends := p.BakeEnds(); !ends.IsZero() {
				v.BakeEndsAt = timePtr(ends)
				v.BakeLeftMs = max(0, ends.Sub(now).Milliseconds())
			}
		}
		out.Waves[k] = v
	}
	return out
}
