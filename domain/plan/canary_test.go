package plan_test

import (
	"testing"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
)

func canaryDraft(n int, then plan.Then) plan.Draft {
	d := draft()
	d.TaskIDs = []string{ulid.Make().String(), ulid.Make().String(), ulid.Make().String()}
	d.Canary = plan.Canary{Tenants: n, Then: then}
	return d
}

func TestCanaryValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		c     plan.Canary
		field string // "" valid
	}{
		{"none", plan.Canary{}, ""},
		{"one of three, auto", plan.Canary{Tenants: 1, Then: plan.ThenAuto}, ""},
		{"two of three, approve", plan.Canary{Tenants: 2, Then: plan.ThenApprove}, ""},
		{"every tenant", plan.Canary{Tenants: 3, Then: plan.ThenAuto}, "canary.tenants"},
		{"negative", plan.Canary{Tenants: -1, Then: plan.ThenAuto}, "canary.tenants"},
		{"then without tenants", plan.Canary{Then: plan.ThenAuto}, "canary.tenants"},
		{"unknown then", plan.Canary{Tenants: 1, Then: "later"}, "canary.then"},
		{"missing then", plan.Canary{Tenants: 1}, "canary.then"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := plan.New(canaryDraft(tt.c.Tenants, tt.c.Then), t0)
			if tt.field == "" {
				require.NoError(t, err)
				assert.Equal(t, tt.c, p.Canary())
				return
			}
			require.ErrorIs(t, err, plan.ErrInvalid)
			var fe *stage.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.field, fe.Field)
		})
	}
}

func TestStartRateValidation(t *testing.T) {
	t.Parallel()
	for _, rate := range []int{-1, plan.MaxStartRate + 1} {
		d := draft()
		d.StartRate = rate
		_, err := plan.New(d, t0)
		var fe *stage.FieldError
		require.ErrorAs(t, err, &fe, "rate %d", rate)
		assert.Equal(t, "startRate", fe.Field)
	}
	d := draft()
	d.StartRate = 30
	p := newPlan(t, d)
	assert.Equal(t, 30, p.StartRate())
}

func TestCanaryIsTwoRings(t *testing.T) {
	t.Parallel()
	t.Run("auto promotes when the wave passes", func(t *testing.T) {
		t.Parallel()
		p := newPlan(t, canaryDraft(1, plan.ThenAuto))
		require.Equal(t, plan.PhaseCanary, p.Phase())
		assert.Len(t, p.RingTaskIDs(0), 1)
		assert.Len(t, p.RingTaskIDs(1), 2)
		assert.Equal(t, p.TaskIDs()[:1], p.StartableTaskIDs())
		started, err := p.RingCompleted(0, t0)
		require.NoError(t, err)
		assert.True(t, started)
		assert.Equal(t, plan.PhasePromoted, p.Phase())
		assert.Equal(t, p.TaskIDs(), p.StartableTaskIDs())
		_, err = p.RingCompleted(0, t0)
		require.ErrorIs(t, err, plan.ErrInvalidTransition, "a wave passes once")
	})
	t.Run("approve waits for an operator", func(t *testing.T) {
		t.Parallel()
		p := newPlan(t, canaryDraft(2, plan.ThenApprove))
		started, err := p.RingCompleted(0, t0)
		require.NoError(t, err)
		assert.False(t, started)
		assert.Equal(t, plan.PhaseAwaitingApproval, p.Phase())
		assert.Len(t, p.StartableTaskIDs(), 2, "only the canaries")
		started, err = p.ApproveRing(stage.Decision{Approved: true, By: "alice"}, t0)
		require.NoError(t, err)
		assert.True(t, started)
		assert.Equal(t, plan.PhasePromoted, p.Phase())
		require.ErrorIs(t, p.RejectRing(stage.Decision{By: "alice"}, t0), nil, "the last ring may still be rejected")
	})
	t.Run("a failed canary halts; approve goes on with the wave", func(t *testing.T) {
		t.Parallel()
		p := newPlan(t, canaryDraft(2, plan.ThenApprove))
		assert.True(t, p.Rollout().Budget(0).Exceeded(1, 2), "any canary failure crosses its budget")
		require.NoError(t, p.HaltRing(0, "canary tenant t1 failed", t0))
		assert.Equal(t, plan.PhaseHalted, p.Phase())
		assert.Empty(t, p.StartableTaskIDs(), "nothing new starts")
		started, err := p.ApproveRing(stage.Decision{Approved: true, By: "alice"}, t0)
		require.NoError(t, err)
		assert.False(t, started)
		assert.Equal(t, plan.PhaseCanary, p.Phase())
		assert.True(t, p.Ring().Waived)
	})
	t.Run("rejected never starts the rest", func(t *testing.T) {
		t.Parallel()
		p := newPlan(t, canaryDraft(1, plan.ThenApprove))
		require.NoError(t, p.RejectRing(stage.Decision{By: "alice"}, t0))
		assert.Equal(t, plan.PhaseHalted, p.Phase())
		assert.Empty(t, p.StartableTaskIDs())
		_, err := p.ApproveRing(stage.Decision{Approved: true, By: "alice"}, t0)
		require.ErrorIs(t, err, plan.ErrInvalidTransition)
		var re *plan.RingError
		require.ErrorAs(t, err, &re)
		assert.Equal(t, plan.RingRejected, re.Ring.Phase)
	})
	t.Run("no canary wave", func(t *testing.T) {
		t.Parallel()
		p := newPlan(t, draft())
		assert.Equal(t, plan.Phase(""), p.Phase())
		assert.Equal(t, p.TaskIDs(), p.StartableTaskIDs())
		_, err := p.ApproveRing(stage.Decision{Approved: true, By: "alice"}, t0)
		require.ErrorIs(t, err, plan.ErrInvalidTransition)
	})
	t.Run("a cancelled plan is not approved", func(t *testing.T) {
		t.Parallel()
		p := newPlan(t, canaryDraft(1, plan.ThenApprove))
		require.NoError(t, p.Cancel(t0))
		var te *plan.TransitionError
		_, err := p.ApproveRing(stage.Decision{Approved: true, By: "alice"}, t0)
		require.ErrorAs(t, err, &te)
	})
	t.Run("load reads a phase stored before rings", func(t *testing.T) {
		t.Parallel()
		s := newPlan(t, canaryDraft(1, plan.ThenAuto)).State()
		s.Ring = plan.Ring{}
		s.Phase = "SOMEWHERE"
		_, err := plan.Load(s)
		require.ErrorIs(t, err, plan.ErrInvalid)
		s.Phase = plan.PhaseHalted
		p, err := plan.Load(s)
		require.NoError(t, err)
		assert.Equal(t, plan.PhaseHalted, p.Phase())
		assert.Equal(t, plan.RingRejected, p.Ring().Phase, "a canary plan HALTED before rings had its rest cancelled")
		s = newPlan(t, draft()).State()
		s.Phase = plan.PhaseCanary
		_, err = plan.Load(s)
		require.ErrorIs(t, err, plan.ErrInvalid, "a phase without a canary wave")
	})
}
