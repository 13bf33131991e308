package plan_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
)

func TestShare(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in       string
		of200    int
		exceeded [2]int // failed of total that crosses it
		ok       [2]int // failed of total that does not
	}{
		{"1", 1, [2]int{2, 20}, [2]int{1, 20}},
		{"10%", 20, [2]int{3, 20}, [2]int{2, 20}},
		{"1%", 2, [2]int{1, 20}, [2]int{0, 20}},
		{"50%", 100, [2]int{11, 20}, [2]int{10, 20}},
		{"0", 0, [2]int{1, 20}, [2]int{0, 20}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			s, err := plan.ParseShare(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.in, s.String())
			assert.Equal(t, tt.of200, s.Of(200))
			assert.True(t, s.Exceeded(tt.exceeded[0], tt.exceeded[1]))
			assert.False(t, s.Exceeded(tt.ok[0], tt.ok[1]))
		})
	}
	for _, bad := range []string{"", "-1", "0%", "101%", "x%", "ten", "NaN%"} {
		_, err := plan.ParseShare(bad)
		require.Error(t, err, bad)
	}
}

// rings is the acceptance's rollout: 1 / 10 % / 50 % / rest.
func rings() plan.Rollout {
	ten := plan.Share{Percent: 10}
	return plan.Rollout{Order: plan.OrderSubmission, Waves: []plan.Wave{
		{Name: "first", Size: plan.Share{Count: 1}, Bake: 2 * time.Second, Then: plan.ThenApprove},
		{Name: "ten", Size: plan.Share{Percent: 10}, Bake: 2 * time.Second, Then: plan.ThenAuto, FailureBudget: &ten},
		{Name: "half", Size: plan.Share{Percent: 50}, Bake: 2 * time.Second, Then: plan.ThenAuto},
		{Name: "rest", Rest: true, Then: plan.ThenAuto},
	}}
}

func unpinned(n int) []int { return slices.Repeat([]int{-1}, n) }

func TestDeal(t *testing.T) {
	t.Parallel()
	t.Run("submission order", func(t *testing.T) {
		t.Parallel()
		order, bounds, err := rings().Deal(unpinned(200))
		require.NoError(t, err)
		assert.Equal(t, []int{0, 1, 21, 121, 200}, bounds)
		for i, pos := range order {
			require.Equal(t, i, pos)
		}
	})
	t.Run("pins go first and may grow a ring", func(t *testing.T) {
		t.Parallel()
		pins := unpinned(10)
		pins[7], pins[8] = 0, 0 // two pinned to the 1-tenant ring
		pins[9] = 2
		r := rings()
		order, bounds, err := r.Deal(pins)
		require.NoError(t, err)
		assert.Equal(t, []int{7, 8}, order[bounds[0]:bounds[1]], "ring 0 is its pins, past its size")
		assert.Equal(t, []int{0}, order[bounds[1]:bounds[2]], "10 % of 10")
		assert.Equal(t, []int{9, 1, 2, 3, 4}, order[bounds[2]:bounds[3]], "its pin, then 4 to make 50 %")
		assert.Equal(t, []int{5, 6}, order[bounds[3]:bounds[4]])
	})
	t.Run("shuffle is the seed's", func(t *testing.T) {
		t.Parallel()
		r := rings()
		r.Order, r.Seed = plan.OrderShuffle, 7
		a, _, err := r.Deal(unpinned(200))
		require.NoError(t, err)
		b, _, err := r.Deal(unpinned(200))
		require.NoError(t, err)
		assert.Equal(t, a, b, "the same seed, the same rings")
		assert.NotEqual(t, a[:21], []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
		r.Seed = 8
		c, _, err := r.Deal(unpinned(200))
		require.NoError(t, err)
		assert.NotEqual(t, a, c)
		assert.ElementsMatch(t, a, c, "a permutation")
	})
	t.Run("tenants left without a rest", func(t *testing.T) {
		t.Parallel()
		r := rings()
		r.Waves[3] = plan.Wave{Name: "last", Size: plan.Share{Count: 5}, Then: plan.ThenAuto}
		_, _, err := r.Deal(unpinned(200))
		var fe *stage.FieldError
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, "waves", fe.Field)
		require.ErrorIs(t, err, plan.ErrInvalid)
	})
	t.Run("small plans leave later rings empty", func(t *testing.T) {
		t.Parallel()
		_, bounds, err := rings().Deal(unpinned(1))
		require.NoError(t, err)
		assert.Equal(t, []int{0, 1, 1, 1, 1}, bounds)
	})
}

func TestRolloutCheckNamesTheField(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		edit  func(r *plan.Rollout)
		field string
	}{
		{"one wave", func(r *plan.Rollout) { r.Waves = r.Waves[:1] }, "waves"},
		{"rest not last", func(r *plan.Rollout) { r.Waves[1].Rest = true }, "waves[1].size"},
		{"no size", func(r *plan.Rollout) { r.Waves[0].Size = plan.Share{} }, "waves[0].size"},
		{"bake too long", func(r *plan.Rollout) { r.Waves[2].Bake = 25 * time.Hour }, "waves[2].bake"},
		{"then", func(r *plan.Rollout) { r.Waves[1].Then = "later" }, "waves[1].then"},
		{"duplicate name", func(r *plan.Rollout) { r.Waves[2].Name = "first" }, "waves[2].name"},
		{"order", func(r *plan.Rollout) { r.Order = "random" }, "order"},
		{"concurrency", func(r *plan.Rollout) { r.Waves[0].MaxConcurrency = -1 }, "waves[0].maxConcurrency"},
		{"health kind", func(r *plan.Rollout) { r.Waves[0].Health = &stage.Spec{Name: "h", Kind: "sleep"} }, "waves[0].health"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := rings()
			tt.edit(&r)
			var fe *stage.FieldError
			require.ErrorAs(t, r.Check(), &fe)
			assert.Equal(t, tt.field, fe.Field)
		})
	}
	require.NoError(t, rings().Check())
}

// ringPlan is a plan of n tenants rolled out in r.
func ringPlan(t *testing.T, r plan.Rollout, n int) *plan.Plan {
	t.Helper()
	_, bounds, err := r.Deal(unpinned(n))
	require.NoError(t, err)
	r.Bounds = bounds
	d := draft()
	d.TaskIDs = nil
	for range n {
		d.TaskIDs = append(d.TaskIDs, ulid.Make().String())
	}
	d.Rollout = r
	p := newPlan(t, d)
	require.NoError(t, p.Start(t0))
	return p
}

func TestRingsAdvance(t *testing.T) {
	t.Parallel()
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	r := rings()
	r.Waves[1].Health = &stage.Spec{Name: "health", Kind: "http", Params: map[string]any{"url": "http://h"}}
	p := ringPlan(t, r, 200)
	assert.Len(t, p.StartableTaskIDs(), 1, "only ring 0 may start")
	assert.Len(t, p.RingTaskIDs(2), 100)

	_, err := p.RingCompleted(1, at(1))
	require.ErrorIs(t, err, plan.ErrInvalidTransition, "not the current ring")
	started, err := p.RingCompleted(0, at(1))
	require.NoError(t, err)
	require.False(t, started)
	assert.Equal(t, plan.RingBaking, p.Ring().Phase)
	assert.Equal(t, at(3), p.BakeEnds())
	_, err = p.BakeOver(0, at(2))
	require.ErrorIs(t, err, plan.ErrInvalidTransition, "before the bake ends")
	started, err = p.BakeOver(0, at(3))
	require.NoError(t, err)
	assert.False(t, started, "then approve")
	assert.Equal(t, plan.RingAwaitingApproval, p.Ring().Phase)
	assert.Len(t, p.StartableTaskIDs(), 1)
	started, err = p.ApproveRing(stage.Decision{Approved: true, By: "alice"}, at(4))
	require.NoError(t, err)
	assert.True(t, started)
	assert.Equal(t, plan.Ring{Index: 1, Phase: plan.RingRunning, Since: at(4)}, p.Ring())
	assert.Len(t, p.StartableTaskIDs(), 21)

	started, err = p.RingCompleted(1, at(5))
	require.NoError(t, err)
	require.False(t, started)
	started, err = p.BakeOver(1, at(7))
	require.NoError(t, err)
	require.False(t, started)
	assert.Equal(t, plan.RingChecking, p.Ring().Phase, "ring 1 has a check")
	require.NoError(t, p.HaltRing(1, "health check failed", at(8)))
	assert.Empty(t, p.StartableTaskIDs())
	started, err = p.ApproveRing(stage.Decision{Approved: true, By: "alice"}, at(9))
	require.NoError(t, err)
	assert.True(t, started, "a check's halt approved makes way for the next ring")
	assert.Equal(t, 2, p.Ring().Index)

	started, err = p.RingCompleted(2, at(10))
	require.NoError(t, err)
	require.False(t, started)
	started, err = p.BakeOver(2, at(12))
	require.NoError(t, err)
	require.True(t, started, "then auto")
	assert.Equal(t, 3, p.Ring().Index)
	assert.Equal(t, p.TaskIDs(), p.StartableTaskIDs())
	_, err = p.ApproveRing(stage.Decision{Approved: true, By: "alice"}, at(13))
	require.ErrorIs(t, err, plan.ErrInvalidTransition, "nothing after the last ring")
	started, err = p.RingCompleted(3, at(14))
	require.NoError(t, err)
	require.False(t, started)
	assert.Equal(t, plan.RingPassed, p.Ring().Phase, "the last ring neither bakes nor waits")
	for k := range 4 {
		assert.Equal(t, plan.RingPassed, p.RingPhaseOf(k), fmt.Sprint(k))
	}
}

func TestRingLoadRechecks(t *testing.T) {
	t.Parallel()
	s := ringPlan(t, rings(), 20).State()
	good := s
	s.Ring.Index = 4
	_, err := plan.Load(s)
	require.ErrorIs(t, err, plan.ErrInvalid)
	s = good
	s.Ring.Phase = plan.RingHalted // without the phase it was halted in
	_, err = plan.Load(s)
	require.ErrorIs(t, err, plan.ErrInvalid)
	s = good
	s.Rollout.Bounds = []int{0, 1, 2, 3, 19}
	_, err = plan.Load(s)
	require.ErrorIs(t, err, plan.ErrInvalid, "bounds that leave a task out")
	_, err = plan.Load(good)
	require.NoError(t, err)
}

// A budget tolerates the most failures that do not cross it: one more does.
func TestShareToleratesTheFailuresThatDoNotCrossIt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		share plan.Share
		total int
		want  int
	}{
		{"no budget", plan.Share{}, 10, 0},
		{"a count", plan.Share{Count: 3}, 10, 3},
		{"10% of 10", plan.Share{Percent: 10}, 10, 1},
		{"10% of 9", plan.Share{Percent: 10}, 9, 0},
		{"10% of 200", plan.Share{Percent: 10}, 200, 20},
		{"2.5% of 1000", plan.Share{Percent: 2.5}, 1000, 25},
		{"100% of 7", plan.Share{Percent: 100}, 7, 7},
		{"a share of an empty ring", plan.Share{Percent: 50}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.share.Tolerated(tt.total)
			assert.Equal(t, tt.want, got)
			if tt.total > 0 {
				assert.False(t, tt.share.Exceeded(got, tt.total), "what it tolerates does not cross it")
				if got < tt.total {
					assert.True(t, tt.share.Exceeded(got+1, tt.total), "one more does")
				}
			}
		})
	}
}
