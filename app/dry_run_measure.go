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
	// dryRunMaxMeasurements bounds the queries one dry run sends: the rings' analyses first,
	// then the page's stages; what is past it says so.
	dryRunMaxMeasurements = 100
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
	jobs := s.ringJobs(r, rings, nil)
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
	runMeasurements(ctx, jobs)
}

// ringJobs adds to jobs a measurement of each ring's analyses, recorded in rings.
func (s *Service) ringJobs(r plan.Rollout, rings []RingPreview, jobs []measureJob) []measureJob {
	first := len(jobs)
	for k := range rings {
		for _, a := range r.Waves[k].Analysis {
			h, ok := s.kinds.Handler(a.Kind)
			m, measures := h.(measurer)
			if !ok || !measures {
				continue
			}
			red := &stage.Redactor{}
			data := r.RingData(checkPlanID, k)
			data.ExecutorURL, data.Secret = s.executorURL(), red.Resolver(s.secretValue)
			params, errs := stage.NewRenderer().RenderAll("analysis", a.Params, data, stage.OptionsOf(h)...)
			if len(errs) > 0 {
				continue
			}
			rings[k].Analysis = append(rings[k].Analysis, AnalysisPreview{Name: a.Name})
			jobs = append(jobs, measureJob{h: m, params: params, red: red})
		}
	}
	// The outputs are placed once rings[k].Analysis no longer grows (its elements move).
	n := first
	for k := range rings {
		for j := range rings[k].Analysis {
			jobs[n].out = &rings[k].Analysis[j].Measurement
			n++
		}
	}
	return jobs
}

// secretValue reads secret name for a measurement (its value is never shown: see Redactor).
func (s *Service) secretValue(name string) (string, error) {
	if s.secrets == nil {
		return "", errors.New("no secrets on this executor (serve --secrets-dir)")
	}
	return s.secrets.Secret(name)
}

// runMeasurements takes jobs, dryRunMeasurements at once, within dryRunMeasureTime, the first
// dryRunMaxMeasurements of them.
func runMeasurements(ctx context.Context, jobs []measureJob) {
	ctx, cancel := context.WithTimeout(ctx, dryRunMeasureTime)
	defer cancel()
	if len(jobs) > dryRunMaxMeasurements {
		for _, j := range jobs[dryRunMaxMeasurements:] {
			*j.out = stage.Measurement{Value: "none", Verdict: stage.VerdictInconclusive,
				Message: fmt.Sprintf("not measured: a dry run measures at most %d analyses", dryRunMaxMeasurements)}
		}
		jobs = jobs[:dryRunMaxMeasurements]
	}
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
				m = stage.Measurement{At: at, Value: "error", Verdict: stage.VerdictInconclusive, Message: stage.MessageOf(err)}
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
