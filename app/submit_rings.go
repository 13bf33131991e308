package app

import (
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// RingPreview is one ring of a dry run: its wave and the tenants dealt into it, in order.
type RingPreview struct {
	Wave     string
	Tenants  []string
	Analysis []AnalysisPreview // each of its analyses measured once
}

// withRolloutDefaults fills what a submission's rings leave out: waves named wave-1, wave-2,
// ... then auto; a health check of kind http named health; analyses of kind prometheus named
// analysis-1, analysis-2, ...; submission order; a shuffle's seed from the tenant ids (the
// same plan, the same rings).
func withRolloutDefaults(req SubmitRequest) plan.Rollout {
	r := req.Rollout
	if !r.Enabled() {
		return r
	}
	r.Waves = append([]plan.Wave(nil), r.Waves...)
	for i := range r.Waves {
		if r.Waves[i].Name == "" {
			r.Waves[i].Name = fmt.Sprintf("wave-%d", i+1)
		}
		if r.Waves[i].Then == "" {
			r.Waves[i].Then = plan.ThenAuto
		}
		if h := r.Waves[i].Health; h != nil && (h.Kind == "" || h.Name == "") {
			hc := *h
			if hc.Kind == "" {
				hc.Kind = "http"
			}
			if hc.Name == "" {
				hc.Name = "health"
			}
			r.Waves[i].Health = &hc
		}
		r.Waves[i].Analysis = withAnalysisDefaults(r.Waves[i].Analysis)
	}
	if r.Order == "" {
		r.Order = plan.OrderSubmission
	}
	if r.Order == plan.OrderShuffle && r.Seed == 0 {
		h := fnv.New64a()
		for _, tn := range req.Tenants {
			h.Write([]byte(tn.ID))
			h.Write([]byte{0})
		}
		r.Seed = h.Sum64()
	}
	return r
}

// checkRollout reports through add what is wrong with a submission's rings and returns them
// with their defaults.
func (s *Service) checkRollout(req SubmitRequest, add func(field, reason string)) plan.Rollout {
	r := withRolloutDefaults(req)
	if r.Enabled() && req.Canary.Tenants > 0 {
		add("waves", "a plan has a canary or waves, not both (a canary is two waves)")
	}
	var fe *stage.FieldError
	if errors.As(r.Check(), &fe) {
		add(fe.Field, fe.Reason)
	}
	for i, w := range r.Waves {
		s.checkAnalyses(r, i, add)
		if w.Health == nil {
			continue
		}
		field := fmt.Sprintf("waves[%d].health", i)
		if at, ok := readsATenant(field+".params", w.Health.Params); ok {
			add(at, "a ring's check is the ring's, not a tenant's: its templates see .PlanID, .ExecutorURL, .Params.wave and .Params.ring")
			continue
		}
		h, ok := s.kinds.Handler(w.Health.Kind)
		if !ok {
			add(field+".kind", "unknown check kind "+w.Health.Kind)
			continue
		}
		data := r.RingData(checkPlanID, i)
		data.ExecutorURL, data.Secret = s.executorURL(), s.secretPlaceholder
		params, errs := stage.NewRenderer().RenderAll(field+".params", w.Health.Params, data, stage.OptionsOf(h)...)
		for _, fe := range errs {
			add(fe.Field, fe.Reason)
		}
		if pv, ok := h.(stage.ParamValidator); ok && len(errs) == 0 {
			if verr := pv.ValidateParams(params); verr != nil && errors.As(paramError(field+".params", verr), &fe) {
				add(fe.Field, fe.Reason)
			}
		}
	}
	for i, tn := range req.Tenants {
		if tn.Wave == "" {
			continue
		}
		if !r.Enabled() {
			add(fmt.Sprintf("tenants[%d].wave", i), "pins the tenant to a wave of a plan without waves")
		} else if _, ok := r.Wave(tn.Wave); !ok {
			add(fmt.Sprintf("tenants[%d].wave", i), fmt.Sprintf("no wave is named %q", tn.Wave))
		}
	}
	return r
}

// deal puts tasks in ring order and returns the rollout with its bounds and the rings a dry
// run shows. Without waves it changes nothing.
func deal(r plan.Rollout, req SubmitRequest, tasks []*task.Task) (plan.Rollout, []*task.Task, []RingPreview, error) {
	if !r.Enabled() {
		return r, tasks, nil, nil
	}
	pins := make([]int, len(req.Tenants))
	for i, tn := range req.Tenants {
		pins[i] = -1
		if k, ok := r.Wave(tn.Wave); ok && tn.Wave != "" {
			pins[i] = k
		}
	}
	order, bounds, err := r.Deal(pins)
	if err != nil {
		return r, nil, nil, err
	}
	r.Bounds = bounds
	dealt := make([]*task.Task, len(order))
	for i, pos := range order {
		dealt[i] = tasks[pos]
	}
	rings := make([]RingPreview, len(r.Waves))
	for k, w := range r.Waves {
		rings[k].Wave = w.Name
		for _, t := range dealt[bounds[k]:bounds[k+1]] {
			rings[k].Tenants = append(rings[k].Tenants, t.TenantID())
		}
	}
	return r, dealt, rings, nil
}
