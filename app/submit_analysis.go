package app

import (
	"errors"
	"fmt"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
)

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
func (s *Service) checkAnalyses(i int, w plan.Wave, add func(field, reason string)) {
	for j, a := range w.Analysis {
		field := fmt.Sprintf("waves[%d].analysis[%d]", i, j)
		h, ok := s.kinds.Handler(a.Kind)
		v, validates := h.(analysisValidator)
		if !ok || !validates {
			continue // the rollout's check names the kind
		}
		params, errs := stage.NewRenderer().RenderAll(field, a.Params, stage.Data{
			PlanID: "01H00000000000000000000000", Params: map[string]any{"wave": w.Name, "ring": i}, ExecutorURL: s.executorURL(),
			Secret: s.secretPlaceholder,
		}, stage.OptionsOf(h)...,
		)
		for _, fe := range errs {
			add(fe.Field, fe.Reason)
		}
		var fe *stage.FieldError
		if verr := v.ValidateAnalysis(params); len(errs) == 0 && verr != nil && errors.As(paramError(field, verr), &fe) {
			add(fe.Field, fe.Reason)
		}
	}
}
