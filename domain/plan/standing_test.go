package plan_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/plan"
)

// Restand moves a plan to another standing, checking what a standing can break, and leaves
// the plan it was called on as it was.
func TestRestand(t *testing.T) {
	t.Parallel()
	p := newPlan(t, draft())
	before := p.Standing()
	done := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		s    plan.Standing
		ok   bool
	}{
		{"running", plan.Standing{Status: plan.Running, Version: 3, StartedAt: done}, true},
		{"completed with its end", plan.Standing{Status: plan.Completed, Version: 4, FinishedAt: done}, true},
		{"completed without its end", plan.Standing{Status: plan.Completed, Version: 4}, false},
		{"an unknown status", plan.Standing{Status: "DONE"}, false},
		{"a phase without a canary", plan.Standing{Status: plan.Running, Phase: plan.PhaseCanary}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := p.Restand(tc.s)
			if !tc.ok {
				require.ErrorIs(t, err, plan.ErrInvalid)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.s, got.Standing())
			assert.Equal(t, p.TaskIDs(), got.TaskIDs(), "the unchanging part is kept")
			assert.Equal(t, before, p.Standing(), "the plan it was called on is unchanged")
		})
	}
}
