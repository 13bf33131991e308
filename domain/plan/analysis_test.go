package plan_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
)

// analysed is a three-ring rollout whose first ring bakes 10 s under one analysis measured
// every 2 s, tolerating one failed measurement.
func analysed() plan.Rollout {
	return plan.Rollout{Order: plan.OrderSubmission, Waves: []plan.Wave{
		{Name: "canary", Size: plan.Share{Count: 1}, Bake: 10 * time.Second, Then: plan.ThenAuto, Analysis: []stage.Spec{{
			Name: "errors", Kind: plan.AnalysisKind, Params: map[string]any{
				"address": "http://prom:9090", "query": `rate(errors{ring="canary"}[1m])`, "successCondition": "result < 0.01",
				"interval": "2s", "failureLimit": 1,
			},
		}}},
		{Name: "half", Size: plan.Share{Percent: 50}, Then: plan.ThenAuto},
		{Name: "rest", Rest: true, Then: plan.ThenAuto},
	}}
}

func measured(at time.Time, v stage.Verdict) stage.Measurement {
	return stage.Measurement{At: at, Value: "0.5", Verdict: v, Message: "successCondition `result < 0.01` did not hold"}
}

func TestRingAnalysisMeasuresThroughoutTheBake(t *testing.T) {
	t.Parallel()
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	p := ringPlan(t, analysed(), 4)
	_, err := p.RingCompleted(0, at(0))
	require.NoError(t, err)
	require.Equal(t, plan.RingBaking, p.Ring().Phase)
	since := p.Ring().Since
	assert.Equal(t, []int{0}, p.AnalysesDue(at(0)), "the first measurement at once")
	assert.Equal(t, at(0), p.NextBakeStep())

	halted, err := p.RecordMeasurement(0, since, 0, measured(at(0), stage.VerdictSuccessful), "q")
	require.NoError(t, err)
	assert.False(t, halted)
	assert.Empty(t, p.AnalysesDue(at(1)))
	assert.Equal(t, at(2), p.NextBakeStep(), "the next an interval later")
	_, err = p.RecordMeasurement(0, since, 0, measured(at(1), stage.VerdictSuccessful), "q")
	require.ErrorIs(t, err, plan.ErrStale, "measured before it was due: another executor measured this time")

	_, err = p.RecordMeasurement(0, since, 0, measured(at(9), stage.VerdictSuccessful), "q")
	require.NoError(t, err)
	_, err = p.BakeOver(0, at(10))
	require.ErrorIs(t, err, plan.ErrInvalidTransition, "the bake's end not measured yet")
	assert.Equal(t, []int{0}, p.AnalysesDue(at(10)), "its end is due once the bake is over, before its next time (11 s)")
	halted, err = p.RecordMeasurement(0, since, 0, measured(at(10), stage.VerdictFailed), "q")
	require.NoError(t, err, "the end's measurement is due whatever the interval")
	assert.False(t, halted, "one failure is within failureLimit 1")
	_, err = p.RecordMeasurement(0, since, 0, measured(at(10).Add(time.Millisecond), stage.VerdictFailed), "q")
	require.ErrorIs(t, err, plan.ErrStale, "its end measured once")
	assert.Empty(t, p.AnalysesDue(at(10)))
	started, err := p.BakeOver(0, at(10))
	require.NoError(t, err)
	assert.True(t, started)
	assert.Equal(t, 1, p.Ring().Index)

	rec := p.Analysis()
	assert.Equal(t, 0, rec.Ring)
	require.Len(t, rec.Analyses, 1)
	assert.Equal(t, stage.Tally{Successful: 2, Failed: 1}, rec.Analyses[0].Tally)
	assert.Len(t, rec.Analyses[0].Latest, 3, "kept after the bake")
}

func TestRingAnalysisHaltsTheRingAtOnce(t *testing.T) {
	t.Parallel()
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	p := ringPlan(t, analysed(), 4)
	_, err := p.RingCompleted(0, at(0))
	require.NoError(t, err)
	since := p.Ring().Since
	for i, s := range []int{0, 2} {
		halted, err := p.RecordMeasurement(0, since, 0, measured(at(s), stage.VerdictFailed), `rate(errors{ring="canary"}[1m])`)
		require.NoError(t, err)
		assert.Equal(t, i == 1, halted, "the second failure crosses failureLimit 1")
	}
	r := p.Ring()
	assert.Equal(t, plan.RingHalted, r.Phase, "halted before the bake ran out")
	assert.Equal(t, plan.RingBaking, r.HaltedIn)
	assert.True(t, r.Analysis)
	for _, want := range []string{"ring 0 (canary)", "analysis errors", "2 of 2 measurements failed (failureLimit 1)", `rate(errors{ring="canary"}[1m])`, "value 0.5", "result < 0.01"} {
		assert.Contains(t, r.Halt, want)
	}
	assert.Empty(t, p.StartableTaskIDs(), "nothing new starts")
	_, err = p.RecordMeasurement(0, since, 0, measured(at(4), stage.VerdictSuccessful), "q")
	require.ErrorIs(t, err, plan.ErrInvalidTransition, "no measurement once halted")

	started, err := p.ApproveRing(stage.Decision{Approved: true, By: "alice"}, at(5))
	require.NoError(t, err)
	assert.True(t, started, "an approval makes way for the next ring, as after a failed check")
	assert.Equal(t, 1, p.Ring().Index)
}

func TestRingAnalysisSurvivesLoadAndClone(t *testing.T) {
	t.Parallel()
	p := ringPlan(t, analysed(), 4)
	_, err := p.RingCompleted(0, t0)
	require.NoError(t, err)
	c := p.Clone()
	_, err = c.RecordMeasurement(0, c.Ring().Since, 0, measured(t0, stage.VerdictSuccessful), "q")
	require.NoError(t, err)
	assert.Zero(t, p.Analysis().Analyses[0].Tally.Total(), "a clone's measurements are its own")

	loaded, err := plan.Load(c.State())
	require.NoError(t, err)
	assert.Equal(t, c.Analysis(), loaded.Analysis())

	bad := c.State()
	bad.Analysis.Analyses = append(bad.Analysis.Analyses, plan.AnalysisRecord{})
	_, err = plan.Load(bad)
	require.ErrorIs(t, err, plan.ErrInvalid, "more records than the wave has analyses")
}

func TestRingAnalysisChecked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		edit  func(r *plan.Rollout)
		field string
	}{
		{"on the last ring", func(r *plan.Rollout) { r.Waves[2].Analysis = r.Waves[0].Analysis }, "waves[2].analysis"},
		{"not prometheus", func(r *plan.Rollout) { r.Waves[0].Analysis[0].Kind = "http" }, "waves[0].analysis[0].kind"},
		{"unnamed", func(r *plan.Rollout) { r.Waves[0].Analysis[0].Name = "" }, "waves[0].analysis[0].name"},
		{"with a count", func(r *plan.Rollout) { r.Waves[0].Analysis[0].Params["count"] = 3 }, "waves[0].analysis[0].count"},
		{"twice the same name", func(r *plan.Rollout) {
			r.Waves[0].Analysis = append(r.Waves[0].Analysis, r.Waves[0].Analysis[0])
		}, "waves[0].analysis[1].name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := analysed()
			tc.edit(&r)
			err := r.Check()
			require.ErrorIs(t, err, plan.ErrInvalid)
			var fe *stage.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.field, fe.Field)
		})
	}
}
