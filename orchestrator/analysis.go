package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
)

// ringMeasureTimeout bounds one measurement of a ring's analysis (its query tried again after
// an error included), below the Redis scheduler's claim TTL: an entry is not claimed again
// while its claimer still measures.
const ringMeasureTimeout = 20 * time.Second

// measured is one measurement of a ring's analysis, with its query as rendered.
type measured struct {
	m     stage.Measurement
	query string
}

// measurer is a stage kind that can take one measurement: the kind of a ring's analysis.
type measurer interface {
	Measure(ctx context.Context, params map[string]any) (stage.Measurement, error)
}

// bake acts on the BAKING ring when the Scheduler hands its plan back: it measures the
// analyses due (a failing one halts the ring at once), then ends the bake once it is over and
// its end measured, or schedules the next step. The caller holds the plan lock.
func (ro *rollout) bake(ctx context.Context, p *plan.Plan) {
	if due := p.AnalysesDue(ro.now()); len(due) > 0 {
		// Should this executor not live to record them, whoever the Scheduler hands the plan to
		// then measures again.
		ro.scheduleAt(ctx, p, ro.now().Add(ringMeasureTimeout+checkGrace))
		ms := ro.measure(ctx, p, due)
		if ctx.Err() != nil {
			return // shutting down: the entry just scheduled stays
		}
		saved, ok := ro.recordMeasurements(ctx, p, due, ms)
		if !ok {
			return
		}
		ro.endBake(ctx, saved)
		for i, j := range due { // once the next step is scheduled
			ro.cfg.Logger.Info("rollout: measured", "plan_id", p.ID(), "ring", p.Ring().Index,
				"analysis", p.Rollout().Waves[p.Ring().Index].Analysis[j].Name, "value", ms[i].m.Value, "verdict", ms[i].m.Verdict)
		}
		return
	}
	ro.endBake(ctx, p)
}

// measure takes one measurement of each analysis in due, at once. A measurement that cannot be
// taken (its params do not render, the query is refused as invalid) is an inconclusive one
// saying why.
func (ro *rollout) measure(ctx context.Context, p *plan.Plan, due []int) []measured {
	ring := p.Ring().Index
	w := p.Rollout().Waves[ring]
	out := make([]measured, len(due))
	var wg sync.WaitGroup
	for i, j := range due {
		wg.Go(func() {
			m, query, err := ro.measureOne(ctx, p, ring, w.Analysis[j])
			if err != nil {
				m = stage.Measurement{At: ro.now(), Value: "error", Verdict: stage.VerdictInconclusive, Message: err.Error()}
			}
			if query == "" {
				query, _ = w.Analysis[j].Params["query"].(string)
			}
			out[i] = measured{m: m, query: query}
		})
	}
	wg.Wait()
	return out
}

// measureOne renders an analysis' params like a health check's (.PlanID, .ExecutorURL,
// .Params.wave, .Params.ring, secrets) and takes one measurement, within ringMeasureTimeout.
func (ro *rollout) measureOne(ctx context.Context, p *plan.Plan, ring int, spec stage.Spec) (stage.Measurement, string, error) {
	h, ok := ro.kinds.Handler(spec.Kind)
	m, measures := h.(measurer)
	if !ok || !measures {
		return stage.Measurement{}, "", fmt.Errorf("the %s kind cannot measure", spec.Kind)
	}
	red := &stage.Redactor{}
	data := p.Rollout().RingData(p.ID(), ring)
	data.ExecutorURL, data.Secret = ro.cfg.ExecutorURL(), ro.resolve(red)
	params, err := stage.NewRenderer().Render(fmt.Sprintf("waves[%d].analysis.%s.params", ring, spec.Name), spec.Params, data, stage.OptionsOf(h)...)
	if err != nil {
		return stage.Measurement{}, "", errors.New(red.Text(err.Error()))
	}
	query, _ := params["query"].(string)
	query = red.Text(query)
	ctx, cancel := context.WithTimeout(ctx, ringMeasureTimeout)
	defer cancel()
	at := ro.now() // the executor's clock decides when a measurement is due, not the kind's
	got, err := m.Measure(ctx, params)
	if err != nil {
		return stage.Measurement{}, query, errors.New(red.Text(stage.MessageOf(err)))
	}
	got.At, got.Value, got.Message = at, red.Text(got.Value), red.Text(got.Message)
	return got, query, nil
}

// recordMeasurements records ms (of the analyses in due) in the plan as stored, halting the
// ring when one failed past its limits. It returns the plan as it stands and whether the bake
// goes on. A measurement another executor took first is dropped.
func (ro *rollout) recordMeasurements(ctx context.Context, p *plan.Plan, due []int, ms []measured) (*plan.Plan, bool) {
	ctx = context.WithoutCancel(ctx)
	ring, since := p.Ring().Index, p.Ring().Since
	halted := false
	saved, err := ro.updatePlan(ctx, p.ID(), func(p *plan.Plan) error {
		halted = false
		if p.Ring().Index != ring || p.Ring().Phase != plan.RingBaking || !p.Ring().Since.Equal(since) {
			return errSkip // the bake ended meanwhile (an operator's approval or rejection)
		}
		for i, j := range due {
			h, err := p.RecordMeasurement(ring, since, j, ms[i].m, ms[i].query)
			switch {
			case errors.Is(err, plan.ErrStale):
				continue
			case err != nil:
				return err
			case h:
				halted = true
				return nil
			}
		}
		return nil
	})
	switch {
	case errors.Is(err, errSkip):
		return nil, false
	case err != nil:
		ro.cfg.Logger.Error("rollout: record the analysis of a ring", "plan_id", p.ID(), "ring", ring, "err", err)
		return nil, false
	case halted:
		ro.cfg.Logger.Warn("rollout halted by its analysis", "plan_id", p.ID(), "ring", ring, "reason", saved.Ring().Halt)
		ro.feeder.unqueue(ctx, p.ID(), saved.TaskIDs()[:saved.Rollout().Bounds[ring+1]])
		return nil, false
	}
	return saved, true
}
