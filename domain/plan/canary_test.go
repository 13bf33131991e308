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

func TestCanaryPhases(t *testing.T) {
	t.Parallel()
	t.Run("auto promotes when the wave passes", func(t *testing.T) {
		t.Parallel()
		p := newPlan(t, canaryDraft(1, plan.ThenAuto))
		require.Equal(t, plan.PhaseCanary, p.Phase())
		assert.True(t, p.Gated())
		assert.Len(t, p.CanaryTaskIDs(), 1)
		assert.Len(t, p.RestTaskIDs(), 2)
		promoted, err := p.PassCanary()
		require.NoError(t, err)
		assert.True(t, promoted)
		assert.Equal(t, plan.PhasePromoted, p.Phase())
		assert.False(t, p.Gated())
		_, err = p.PassCanary()
		require.ErrorIs(t, err, plan.ErrInvalidTransition, "a wave passes once")
	})
	t.Run("approve waits for an operator", func(t *testing.T) {
		t.Parallel()
		p := newPlan(t, canaryDraft(2, plan.ThenApprove))
		promoted, err := p.PassCanary()
		require.NoError(t, err)
		assert.False(t, promoted)
		assert.Equal(t, plan.PhaseAwaitingApproval, p.Phase())
		assert.True(t, p.Gated())
		require.NoError(t, p.Approve())
		assert.Equal(t, plan.PhasePromoted, p.Phase())
		require.ErrorIs(t, p.Halt(), plan.ErrInvalidTransition, "a promoted plan is not halted")
	})
	t.Run("halted never starts the rest", func(t *testing.T) {
		t.Parallel()
		p := newPlan(t, canaryDraft(1, plan.ThenApprove))
		require.NoError(t, p.Halt())
		assert.Equal(t, plan.PhaseHalted, p.Phase())
		assert.True(t, p.Gated())
		err := p.Approve()
		require.ErrorIs(t, err, plan.ErrInvalidTransition)
		var pe *plan.PhaseError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, plan.PhaseHalted, pe.From)
	})
	t.Run("no canary wave", func(t *testing.T) {
		t.Parallel()
		p := newPlan(t, draft())
		assert.Equal(t, plan.Phase(""), p.Phase())
		assert.False(t, p.Gated())
		assert.Empty(t, p.CanaryTaskIDs())
		require.ErrorIs(t, p.Approve(), plan.ErrInvalidTransition)
	})
	t.Run("a cancelled plan is not approved", func(t *testing.T) {
		t.Parallel()
		p := newPlan(t, canaryDraft(1, plan.ThenApprove))
		require.NoError(t, p.Cancel(t0))
		var te *plan.TransitionError
		require.ErrorAs(t, p.Approve(), &te)
	})
	t.Run("load re-checks the phase", func(t *testing.T) {
		t.Parallel()
		s := newPlan(t, canaryDraft(1, plan.ThenAuto)).State()
		s.Phase = "SOMEWHERE"
		_, err := plan.Load(s)
		require.ErrorIs(t, err, plan.ErrInvalid)
		s.Phase = plan.PhaseHalted
		p, err := plan.Load(s)
		require.NoError(t, err)
		assert.Equal(t, plan.PhaseHalted, p.Phase())
		s = newPlan(t, draft()).State()
		s.Phase = plan.PhaseCanary
		_, err = plan.Load(s)
		require.ErrorIs(t, err, plan.ErrInvalid, "a phase without a canary wave")
	})
}
