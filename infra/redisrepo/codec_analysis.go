package redisrepo

import (
	"encoding/json"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
)

// analysisJSON is what the analyses of a ring's latest bake measured, as the plan hash's
// "analysis" status field holds it ("" when no bake with analyses began).
type analysisJSON struct {
	Ring     int               `json:"ring"`
	Since    string            `json:"since"`
	Analyses []analysisRecJSON `json:"analyses"`
}

type analysisRecJSON struct {
	Successful   int               `json:"successful"`
	Failed       int               `json:"failed"`
	Inconclusive int               `json:"inconclusive"`
	Next         string            `json:"next"`
	Latest       []measurementJSON `json:"latest,omitempty"`
}

type measurementJSON struct {
	At      string `json:"at"`
	Value   string `json:"value"`
	Verdict string `json:"verdict"`
	Message string `json:"message,omitempty"`
}

func encAnalysis(a plan.RingAnalysis) string {
	if a.Analyses == nil {
		return ""
	}
	out := analysisJSON{Ring: a.Ring, Since: encTime(a.Since), Analyses: make([]analysisRecJSON, len(a.Analyses))}
	for i, r := range a.Analyses {
		rj := analysisRecJSON{Successful: r.Tally.Successful, Failed: r.Tally.Failed, Inconclusive: r.Tally.Inconclusive, Next: encTime(r.Next)}
		for _, m := range r.Latest {
			rj.Latest = append(rj.Latest, measurementJSON{At: encTime(m.At), Value: m.Value, Verdict: string(m.Verdict), Message: m.Message})
		}
		out.Analyses[i] = rj
	}
	b, _ := json.Marshal(out) // strings and numbers: never fails
	return string(b)
}

func decAnalysis(v string) (plan.RingAnalysis, error) {
	if v == "" {
		return plan.RingAnalysis{}, nil
	}
	var in analysisJSON
	if err := json.Unmarshal([]byte(v), &in); err != nil {
		return plan.RingAnalysis{}, err
	}
	since, err := decTime(in.Since)
	if err != nil {
		return plan.RingAnalysis{}, err
	}
	out := plan.RingAnalysis{Ring: in.Ring, Since: since, Analyses: make([]plan.AnalysisRecord, len(in.Analyses))}
	for i, rj := range in.Analyses {
		r := plan.AnalysisRecord{Tally: stage.Tally{Successful: rj.Successful, Failed: rj.Failed, Inconclusive: rj.Inconclusive}}
		if r.Next, err = decTime(rj.Next); err != nil {
			return plan.RingAnalysis{}, err
		}
		for _, mj := range rj.Latest {
			at, err := decTime(mj.At)
			if err != nil {
				return plan.RingAnalysis{}, err
			}
			r.Latest = append(r.Latest, stage.Measurement{At: at, Value: mj.Value, Verdict: stage.Verdict(mj.Verdict), Message: mj.Message})
		}
		out.Analyses[i] = r
	}
	return out, nil
}
