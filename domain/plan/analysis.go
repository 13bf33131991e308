package plan

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/executor-dev/executor/domain/stage"
)

// A ring's analyses measure its metrics throughout its bake: each at once when the bake
// begins, then every interval, and once more at or after the bake's end. As soon as one has
// more failed (or inconclusive) measurements than it tolerates the ring halts, its bake cut
// short; the bake ends only once every analysis has measured its end within its limits.

// Limits of a ring's analyses.
const (
	MaxAnalyses      = 5  // analyses of one wave
	MeasurementsKept = 10 // latest measurements an analysis keeps
)

// AnalysisKind is the kind of a ring's analysis (a stage spec): a kind that can measure once.
const AnalysisKind = "prometheus"

// AnalysisRecord is where one analysis of a ring's bake stands.
type AnalysisRecord struct {
	Tally  stage.Tally
	Latest []stage.Measurement // the last MeasurementsKept, oldest first
	Next   time.Time           // when it measures next (the first: when the bake began)
}

// RingAnalysis is what the analyses of a ring's bake measured: the ring, when its bake began,
// and one record per analysis of its wave. It stays after the bake, until the next bake.
type RingAnalysis struct {
	Ring     int
	Since    time.Time
	Analyses []AnalysisRecord
}

// Analysis returns what the analyses of the latest bake measured (zero when no bake with
// analyses began); a copy.
func (p *Plan) Analysis() RingAnalysis {
	a := p.analysis
	a.Analyses = slices.Clone(a.Analyses)
	for i := range a.Analyses {
		a.Analyses[i].Latest = slices.Clone(a.Analyses[i].Latest)
	}
	return a
}

// AnalysisPolicy returns how analysis j of wave k measures and judges.
func (r Rollout) AnalysisPolicy(k, j int) stage.Analysis {
	a, err := stage.ParseAnalysis(r.Waves[k].Analysis[j].Params, true)
	if err != nil { // checked when the plan was made: unreachable
		return stage.Analysis{Interval: stage.DefaultAnalysisInterval, OnEmpty: stage.EmptyInconclusive}
	}
	return a
}

// beginAnalysis starts the analyses of the bake that begins now for ring index.
func (p *Plan) beginAnalysis(index int, now time.Time) {
	n := len(p.rollout.Waves[index].Analysis)
	if n == 0 {
		return
	}
	p.analysis = RingAnalysis{Ring: index, Since: now.UTC(), Analyses: make([]AnalysisRecord, n)}
	for j := range p.analysis.Analyses {
		p.analysis.Analyses[j].Next = now.UTC()
	}
}

// measuring reports whether the current ring bakes with analyses of this bake.
func (p *Plan) measuring() bool {
	return p.inRing(p.ring.Index, RingBaking) && len(p.rollout.Waves[p.ring.Index].Analysis) > 0 &&
		p.analysis.Ring == p.ring.Index && p.analysis.Since.Equal(p.ring.Since)
}

// AnalysesDue returns the analyses of the BAKING ring to measure at now: those whose time has
// come, and once the bake is over those that have not measured its end.
func (p *Plan) AnalysesDue(now time.Time) []int {
	if !p.measuring() {
		return nil
	}
	var due []int
	for j, a := range p.analysis.Analyses {
		if !now.Before(a.Next) || (!now.Before(p.BakeEnds()) && !p.measuredEnd(j)) {
			due = append(due, j)
		}
	}
	return due
}

// measuredEnd reports whether analysis j of the current bake measured at or after its end.
func (p *Plan) measuredEnd(j int) bool {
	l := p.analysis.Analyses[j].Latest
	return len(l) > 0 && !l[len(l)-1].At.Before(p.BakeEnds())
}

// NextBakeStep returns when the BAKING ring has something to do next: an analysis to measure,
// or its bake's end (zero unless it is BAKING).
func (p *Plan) NextBakeStep() time.Time {
	next := p.BakeEnds()
	if !p.measuring() {
		return next
	}
	for j, a := range p.analysis.Analyses {
		if a.Next.Before(next) && !p.measuredEnd(j) {
			next = a.Next
		}
	}
	return next
}

// RecordMeasurement records measurement m of analysis j of ring index's bake (which began
// at since), whose query, rendered, was query: counted, kept among the latest, the next due
// an interval after it. A measurement taken before the analysis was due (another executor
// measured the same time already) is refused with ErrStale, recording nothing. When the
// analysis has failed (or cannot conclude) past its limits the ring halts, and halted is
// true; the reason names the query.
func (p *Plan) RecordMeasurement(index int, since time.Time, j int, m stage.Measurement, query string) (halted bool, err error) {
	if !p.measuring() || !p.analysis.Since.Equal(since) || j < 0 || j >= len(p.analysis.Analyses) {
		return false, p.refuseRing("record a measurement of ring " + fmt.Sprint(index) + " of")
	}
	if !m.Verdict.Valid() {
		return false, fmt.Errorf("%w: verdict %q", ErrInvalid, m.Verdict)
	}
	a := &p.analysis.Analyses[j]
	if m.At.Before(a.Next) && (m.At.Before(p.BakeEnds()) || p.measuredEnd(j)) {
		return false, ErrStale // neither its time nor the bake's end measured
	}
	a.Tally.Add(m.Verdict)
	a.Latest = append(a.Latest, m.Bounded())
	if len(a.Latest) > MeasurementsKept {
		a.Latest = slices.Delete(a.Latest, 0, len(a.Latest)-MeasurementsKept)
	}
	policy := p.rollout.AnalysisPolicy(index, j)
	a.Next = m.At.Add(policy.Interval)
	if !policy.Failing(a.Tally) && !policy.Inconclusive(a.Tally) {
		return false, nil
	}
	spec := p.rollout.Waves[index].Analysis[j]
	why := fmt.Sprintf("ring %d (%s): analysis %s: %s; query %s: value %s at %s: %s", index, p.rollout.Waves[index].Name,
		spec.Name, policy.Judgement(a.Tally), shortQuery(query), m.Value, m.At.UTC().Format(time.RFC3339), m.Message)
	p.halt(index, why, m.At)
	p.ring.Analysis = true
	return true, nil
}

// shortQuery is a query for a halt reason (its start when it is long).
func shortQuery(q string) string {
	if len(q) > 300 {
		q = strings.ToValidUTF8(q[:300], "") + "..."
	}
	return q
}

// analysisPassed reports whether every analysis of the current bake measured its end.
func (p *Plan) analysisPassed() bool {
	if len(p.rollout.Waves[p.ring.Index].Analysis) == 0 {
		return true
	}
	if !p.measuring() {
		return false
	}
	for j := range p.analysis.Analyses {
		if !p.measuredEnd(j) {
			return false
		}
	}
	return true
}

// checkAnalysis checks the ring analysis against the rollout.
func (p *Plan) checkAnalysis() error {
	a := p.analysis
	if a.Analyses == nil {
		return nil
	}
	if !p.rollout.Enabled() || a.Ring < 0 || a.Ring >= len(p.rollout.Waves) || len(a.Analyses) != len(p.rollout.Waves[a.Ring].Analysis) {
		return fmt.Errorf("an analysis of ring %d that does not fit its wave", a.Ring)
	}
	for _, r := range a.Analyses {
		if len(r.Latest) > MeasurementsKept || r.Tally.Total() < len(r.Latest) {
			return fmt.Errorf("ring %d's analysis keeps %d measurements of %d", a.Ring, len(r.Latest), r.Tally.Total())
		}
	}
	return nil
}
