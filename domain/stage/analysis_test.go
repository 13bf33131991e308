package stage_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
)

func TestParseAnalysis(t *testing.T) {
	t.Parallel()
	a, err := stage.ParseAnalysis(map[string]any{}, false)
	require.NoError(t, err)
	assert.Equal(t, stage.Analysis{Interval: stage.DefaultAnalysisInterval, Count: 1, OnEmpty: stage.EmptyInconclusive}, a)

	a, err = stage.ParseAnalysis(map[string]any{"interval": "2s", "count": float64(5), "failureLimit": 1, "inconclusiveLimit": "2", "onEmpty": "failed"}, false)
	require.NoError(t, err)
	assert.Equal(t, stage.Analysis{Interval: 2 * time.Second, Count: 5, FailureLimit: 1, InconclusiveLimit: 2, OnEmpty: stage.EmptyFailed}, a)

	ring, err := stage.ParseAnalysis(map[string]any{"interval": "1s"}, true)
	require.NoError(t, err)
	assert.Zero(t, ring.Count, "a ring's analysis measures throughout its bake")

	for _, tc := range []struct {
		name   string
		params map[string]any
		ring   bool
		field  string
	}{
		{"interval too short", map[string]any{"interval": "10ms"}, false, "interval"},
		{"interval not a duration", map[string]any{"interval": 5}, false, "interval"},
		{"count zero", map[string]any{"count": 0}, false, "count"},
		{"count fractional", map[string]any{"count": 1.5}, false, "count"},
		{"count too large", map[string]any{"count": stage.MaxAnalysisCount + 1}, false, "count"},
		{"count over a day", map[string]any{"count": 26, "interval": "1h"}, false, "count"},
		{"count on a ring", map[string]any{"count": 3}, true, "count"},
		{"failureLimit negative", map[string]any{"failureLimit": -1}, false, "failureLimit"},
		{"inconclusiveLimit not a number", map[string]any{"inconclusiveLimit": "many"}, false, "inconclusiveLimit"},
		{"onEmpty unknown", map[string]any{"onEmpty": "ignore"}, false, "onEmpty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := stage.ParseAnalysis(tc.params, tc.ring)
			require.ErrorIs(t, err, stage.ErrInvalidAnalysis)
			var fe *stage.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.field, fe.Field)
		})
	}
}

func TestAnalysisJudgesItsTally(t *testing.T) {
	t.Parallel()
	a := stage.Analysis{FailureLimit: 1, InconclusiveLimit: 0}
	var tally stage.Tally
	tally.Add(stage.VerdictFailed)
	assert.False(t, a.Failing(tally), "one failure is within failureLimit 1")
	tally.Add(stage.VerdictSuccessful)
	tally.Add(stage.VerdictFailed)
	assert.True(t, a.Failing(tally))
	assert.Equal(t, "2 of 3 measurements failed (failureLimit 1)", a.Judgement(tally))
	assert.False(t, a.Inconclusive(tally))
	tally.Add(stage.VerdictInconclusive)
	assert.True(t, a.Inconclusive(tally))
	assert.Equal(t, 4, tally.Total())
}

func TestMeasurementBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", stage.MaxMeasurementText)
	m := stage.Measurement{Value: long, Message: "short"}.Bounded()
	assert.LessOrEqual(t, len(m.Value), stage.MaxMeasurementText)
	assert.True(t, strings.HasSuffix(m.Value, "..."))
	assert.True(t, strings.HasPrefix(m.Value, "éé"))
	assert.Equal(t, "short", m.Message)
}
