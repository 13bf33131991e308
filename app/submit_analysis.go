package app

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
)

// checkPlanID is the plan id a ring's templates are checked with at submission (the plan's
// own is not chosen yet).
const checkPlanID = "01H00000000000000000000000"

// analysisValidator is a kind that checks the params of a ring's analysis (which has no count:
// it measures throughout the bake).
type analysisValidator interface {
	ValidateAnalysis(params map[string]any) error
}

// withAnalysisDefaults names a wave's unnamed analyses analysis-1, analysis-2, ... and gives
// them plan.AnalysisKind.
func withAnalysisDefaults(in []stage.Spec) []stage.Spec {
	if len(in) == 0 {
		return in
	}
	out := make([]stage.Spec, len(in))
	for j, a := range in {
		if a.Name == "" {
			a.Name = fmt.Sprintf("analysis-%d", j+1)
		}
		if a.Kind == "" {
			a.Kind = plan.AnalysisKind
		}
		out[j] = a
	}
	return out
}

// checkAnalyses reports through add what is wrong with wave i's analyses: their params
// rendered as they will be (the plan, the wave, secrets as placeholders) and checked by their
// kind. Their names, kind and policy are the rollout's to check (plan.Rollout.Check).
func (s *Service) checkAnalyses(r plan.Rollout, i int, add func(field, reason string)) {
	for j, a := range r.Waves[i].Analysis {
		field := fmt.Sprintf("waves[%d].analysis[%d]", i, j)
		if at, ok := readsATenant(field, a.Params); ok {
			add(at, "a ring's analysis is the ring's, not a tenant's: its templates see .PlanID, .ExecutorURL, "+
				".Params.wave and .Params.ring (a query over the ring's tenants: label them by wave)")
			continue
		}
		h, ok := s.kinds.Handler(a.Kind)
		v, validates := h.(analysisValidator)
		if !ok || !validates {
			continue // the rollout's check names the kind
		}
		data := r.RingData(checkPlanID, i)
		data.ExecutorURL, data.Secret = s.executorURL(), s.secretPlaceholder
		params, errs := stage.NewRenderer().RenderAll(field, a.Params, data, stage.OptionsOf(h)...)
		for _, fe := range errs {
			add(fe.Field, fe.Reason)
		}
		var fe *stage.FieldError
		if verr := v.ValidateAnalysis(params); len(errs) == 0 && verr != nil && errors.As(paramError(field, verr), &fe) {
			add(fe.Field, fe.Reason)
		}
	}
}

// tenantFields are what a stage's templates read of its tenant and task, which a ring's
// analysis or check has not (they would render empty: a query for tenant="" measures nothing).
var tenantFields = []string{".TenantID", ".TaskID", ".Attempt", ".Outputs", ".Params."}

// readsATenant returns the field of the first template in v (at field) that reads a tenant's
// or a task's data; .Params.wave and .Params.ring are the ring's.
func readsATenant(field string, v any) (string, bool) {
	switch v := v.(type) {
	case string:
		if !strings.Contains(v, "{{") {
			return "", false
		}
		rest := strings.NewReplacer(".Params.wave", "", ".Params.ring", "").Replace(v)
		for _, f := range tenantFields {
			if strings.Contains(rest, f) {
				return field, true
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if at, ok := readsATenant(field+"."+k, v[k]); ok {
				return at, true
			}
		}
	case []any:
		for i, e := range v {
			if at, ok := readsATenant(fmt.Sprintf("%s[%d]", field, i), e); ok {
				return at, true
			}
		}
	}
	return "", false
}
