package orchestrator

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// TestEverySettledStatusHasAPlanOutcome fails when a status that settles its plan is added
// to task.Statuses without a case in settledOutcome.
func TestEverySettledStatusHasAPlanOutcome(t *testing.T) {
	t.Parallel()
	for _, st := range task.Statuses {
		_, err := settledOutcome([]task.Status{st}, []string{"t1"})
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
		name     string
		statuses []task.Status
		want     outcome
	}{
		{name: "all completed", statuses: []task.Status{task.Completed, task.Completed}, want: outcome{completed: 2}},
		{name: "a failure wins over a cancel", statuses: []task.Status{task.Cancelled, task.Failed}, want: outcome{failed: true, exceptions: 1}},
		{name: "cancelled and skipped are exceptions", statuses: []task.Status{task.Skipped, task.Cancelled}, want: outcome{exceptions: 2}},
		{name: "interrupted fails and is listed", statuses: []task.Status{task.Completed, task.Interrupted}, want: outcome{failed: true, completed: 1, interrupted: []string{"t1"}}},
		{name: "a missing task did not complete", statuses: []task.Status{statusMissing, task.Completed}, want: outcome{failed: true, completed: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := settledOutcome(tc.statuses, []string{"t0", "t1"})
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestOutcomeEndsThePlan: how settled tasks end their plan. A plan with tenants cancelled or
// skipped one by one completes ("with exceptions") when some completed; with none completed,
// or once an operator stopped its rollout, it is CANCELLED; any failure makes it FAILED.
func TestOutcomeEndsThePlan(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	running := func(t *testing.T, rings bool) *plan.Plan {
		t.Helper()
		d := plan.Draft{ID: "01JD7X0000000000000000000P", Name: "p", Stages: []stage.Spec{{Name: "s", Kind: "noop"}}, TaskIDs: []string{"a", "b", "c", "d"}}
		if rings {
			d.Canary = plan.Canary{Tenants: 2, Then: plan.ThenApprove}
		}
		p, err := plan.New(d, now)
		require.NoError(t, err)
		require.NoError(t, p.Start(now))
		if rings {
			require.NoError(t, p.RejectRing(stage.Decision{}, now))
		}
		return p
	}
	tests := []struct {
		name  string
		rings bool // the plan's canary wave was rejected
		o     outcome
		want  plan.Status
	}{
		{name: "every tenant done", o: outcome{completed: 4}, want: plan.Completed},
		{name: "done with one skipped", o: outcome{completed: 3, exceptions: 1}, want: plan.Completed},
		{name: "nothing done", o: outcome{exceptions: 4}, want: plan.Cancelled},
		{name: "a failure", o: outcome{failed: true, completed: 3}, want: plan.Failed},
		{name: "rollout rejected", rings: true, o: outcome{completed: 2, exceptions: 2}, want: plan.Cancelled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := running(t, tc.rings)
			require.NoError(t, tc.o.end(p, now))
			assert.Equal(t, tc.want, p.Status())
		})
	}
}
