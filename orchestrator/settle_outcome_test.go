package orchestrator

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/task"
)

// TestEverySettledStatusHasAPlanOutcome fails when a status that settles its plan is added
// to task.Statuses without a case in settledOutcome.
func TestEverySettledStatusHasAPlanOutcome(t *testing.T) {
	t.Parallel()
	for _, st := range task.Statuses {
		_, _, _, err := settledOutcome([]task.Status{st}, []string{"t1"})
		if st.Settled() {
			assert.NoError(t, err, "status %s", st)
		} else {
			require.ErrorIs(t, err, errUnsettledStatus, "status %s", st)
		}
	}
}

func TestSettledOutcome(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name              string
		statuses          []task.Status
		failed, cancelled bool
		interrupted       []string
	}{
		{name: "all completed", statuses: []task.Status{task.Completed, task.Completed}},
		{name: "a failure wins over a cancel", statuses: []task.Status{task.Cancelled, task.Failed}, failed: true, cancelled: true},
		{name: "cancelled", statuses: []task.Status{task.Completed, task.Cancelled}, cancelled: true},
		{name: "interrupted fails and is listed", statuses: []task.Status{task.Completed, task.Interrupted}, failed: true, interrupted: []string{"t1"}},
		{name: "a missing task did not complete", statuses: []task.Status{statusMissing, task.Completed}, failed: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			failed, cancelled, interrupted, err := settledOutcome(tc.statuses, []string{"t0", "t1"})
			require.NoError(t, err)
			assert.Equal(t, tc.failed, failed)
			assert.Equal(t, tc.cancelled, cancelled)
			assert.Equal(t, tc.interrupted, interrupted)
		})
	}
}
