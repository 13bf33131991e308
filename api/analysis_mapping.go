package api

import (
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/wire"
)

// analysisSpecs reads a wave's analyses: each object's name and kind (optional strings), the
// rest its params.
func analysisSpecs(in []map[string]any, field string, bad func(field, reason string)) []stage.Spec {
	out := make([]stage.Spec, 0, len(in))
	for j, obj := range in {
		f := fmt.Sprintf("%s.analysis[%d]", field, j)
		params := maps.Clone(obj)
		if params == nil {
			params = map[string]any{}
		}
		spec := stage.Spec{Params: params}
		for key, dst := range map[string]*string{"name": &spec.Name, "kind": &spec.Kind} {
			v, ok := params[key]
			if !ok {
				continue
			}
			s, isString := v.(string)
			if !isString {
				bad(f+"."+key, "must be a string")
			}
			*dst = s
			delete(params, key)
		}
		out = append(out, spec)
	}
	return out
}

// analysisViews is what ring k's analyses measure and, when its latest bake was analysed,
// what they measured.
func analysisViews(p *plan.Plan, k int, now time.Time) []wire.AnalysisView {
	r := p.Rollout()
	specs := r.Waves[k].Analysis
	if len(specs) == 0 {
		return nil
	}
	rec := p.Analysis()
	baking := p.Ring().Index == k && p.Ring().Phase == plan.RingBaking
	out := make([]wire.AnalysisView, len(specs))
	for j, s := range specs {
		pol := r.AnalysisPolicy(k, j)
		v := wire.AnalysisView{Name: s.Name, Kind: s.Kind, Query: ringQuery(p, k, s), Interval: pol.Interval.String(),
			FailureLimit: pol.FailureLimit, InconclusiveLimit: pol.InconclusiveLimit, Measurements: []wire.Measurement{}}
		if rec.Analyses != nil && rec.Ring == k {
			a := rec.Analyses[j]
			v.Successful, v.Failed, v.Inconclusive = a.Tally.Successful, a.Tally.Failed, a.Tally.Inconclusive
			for _, m := range a.Latest {
				v.Measurements = append(v.Measurements, wire.Measurement{At: m.At, Value: m.Value, Verdict: string(m.Verdict), Message: m.Message})
			}
			if baking {
				next := a.Next
				if ends := p.BakeEnds(); next.After(ends) {
					next = ends // its last measurement is at the bake's end
				}
				if next.Before(now) {
					next = now
				}
				v.NextAt = timePtr(next)
			}
		}
		out[j] = v
	}
	return out
}

// ringQuery is analysis s of ring k's query as it runs: rendered with the ring's data (as
// written when it reads anything else, a secret say, which is never rendered here).
func ringQuery(p *plan.Plan, k int, s stage.Spec) string {
	q, _ := s.Params["query"].(string)
	if !strings.Contains(q, "{{") || strings.Contains(q, "secret") {
		return q
	}
	out, err := stage.NewRenderer().Render("query", map[string]any{"query": q}, p.Rollout().RingData(p.ID(), k))
	if rendered, ok := out["query"].(string); err == nil && ok {
		return rendered
	}
	return q
}
