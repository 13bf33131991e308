package app

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// A dry run measures each analysis once, so that a typo in a query, an unreachable
// Prometheus or a condition that does not hold today shows before the rollout: the page's
// tenants' analysis stages, and every ring's analyses.

// Bounds of a dry run's measurements.
const (
	// dryRunMeasurements bounds how many measurements one dry run takes at once.
	dryRunMeasurements = 8
	// dryRunMeasureTime bounds them all: what is not measured by then says so.
	dryRunMeasureTime = 15 * time.Second
)

// measurer is a stage kind that can take one measurement (the prometheus kind).
type measurer interface {
	Measure(ctx context.Context, params map[string]any) (stage.Measurement, error)
}

// AnalysisPreview is a dry run's measurement of a ring's analysis.
type AnalysisPreview struct {
	Name        string
	Measurement stage.Measurement
}

// measureJob is one measurement a dry run takes.
type measureJob struct {
	h      measurer
	params map[string]any
	red    *stage.Redactor
	out    *stage.Measurement
}

// measureDryRun measures, once each, the analysis stages of the page's tenants (tasks in
// submission order, previews the page) and the rings' analyses, into previews and rings.
func (s *Service) measureDryRun(ctx context.Context, req SubmitRequest, stages []stage.Spec, tasks []*task.Task,
	previews []TenantPreview, r plan.Rollout, rings []RingPreview) {
	var jobs []measureJob
	page := req.Page.withDefaults()
	for pi := range previews {
		t := tasks[page.Offset+pi]
		for si, sp := range stages {
			h, ok := s.kinds.Handler(sp.Kind)
			m, measures := h.(measurer)
			if !ok || !measures || sp.UsesOutputs() {
				continue
			}
			red := &stage.Redactor{}
			params, errs := stage.NewRenderer().RenderAll(fmt.Sprintf("stages[%d].params", si), sp.Params, stage.Data{
				TenantID: t.TenantID(), PlanID: t.PlanID(), TaskID: t.ID(), Attempt: 1, Params: t.Params(),
				ExecutorURL: s.executorURL(), Secret: red.Resolver(s.secretValue),
			}, stage.OptionsOf(h)...)
			if len(errs) > 0 {
				continue // reported by the check
			}
			previews[pi].Stages[si].Measurement = &stage.Measurement{}
			jobs = append(jobs, measureJob{h: m, params: params, red: red, out: previews[pi].Stages[si].Measurement})
		}
	}
	for k := range rings {
		for _, a := range r.Waves[k].Analysis {
			h, ok := s.kinds.Handler(a.Kind)
			m, measures := h.(measurer)
			if !ok || !measures {
				continue
			}
			red := &stage.Redactor{}
			params, errs := stage.NewRenderer().RenderAll("analysis", a.Params, stage.Data{
				PlanID: "01H00000000000000000000000", Params: map[string]any{"wave": r.Waves[k].Name, "ring": k},
				ExecutorURL: s.executorURL(), Secret: red.Resolver(s.secretValue),
			}, stage.OptionsOf(h)...)
			if len(errs) > 0 {
				continue
			}
			rings[k].Analysis = append(rings[k].Analysis, AnalysisPreview{Name: a.Name})
			jobs = append(jobs, measureJob{h: m, params: params, red: red, out: &rings[k].Analysis[len(rings[k].Analysis)-1].Measurement})
		}
	}
	runMeasurements(ctx, jobs)
}

// secretValue reads secret name for a measurement (its value is never shown: see Redactor).
func (s *Service) secretValue(name string) (string, error) {
	if s.secrets == nil {
		return "", errors.New("no secrets on this executor (serve --secrets-dir)")
	}
	return s.secrets.Secret(name)
}

// runMeasurements takes jobs, dryRunMeasurements at once, within dryRunMeasureTime.
func runMeasurements(ctx context.Context, jobs []measureJob) {
	ctx, cancel := context.WithTimeout(ctx, dryRunMeasureTime)
	defer cancel()
	slots := make(chan struct{}, dryRunMeasurements)
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() {
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
			case <-ctx.Done():
			}
			at := time.Now().UTC()
			m, err := j.h.Measure(ctx, j.params)
			if err != nil {
				m = stage.Measurement{At: at, Value: "error", Verdict: stage.VerdictInconclusive, Message: err.Error()}
			}
			if ctx.Err() != nil && err != nil {
				m.Message = fmt.Sprintf("not measured: the dry run's %s for its measurements ran out", dryRunMeasureTime)
			}
			m.Value, m.Message = j.red.Text(m.Value), j.red.Text(m.Message)
			*j.out = m.Bounded()
		})
	}
	wg.Wait()
}
