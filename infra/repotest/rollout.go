package repotest

import (
	"slices"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// testPlanRolloutControl: a plan's canary wave, start rate and canary phase are stored, and
// the phase (which changes) is saved like its status.
func testPlanRolloutControl(t *testing.T, s Store) {
	p, err := plan.New(plan.Draft{
		ID: ulid.Make().String(), Name: "canaried", Stages: stages(),
		TaskIDs:   []string{ulid.Make().String(), ulid.Make().String(), ulid.Make().String()},
		Canary:    plan.Canary{Tenants: 2, Then: plan.ThenApprove},
		StartRate: 120,
	}, at(0))
	require.NoError(t, err)
	require.NoError(t, s.Plans.Create(t.Context(), p))
	got, err := s.Plans.Plan(t.Context(), p.ID())
	require.NoError(t, err)
	requireSamePlan(t, p, got)
	assert.Equal(t, plan.PhaseCanary, got.Phase())

	require.NoError(t, p.Start(at(1)))
	started, err := p.RingCompleted(0, at(2))
	require.NoError(t, err)
	require.False(t, started)
	require.NoError(t, s.Plans.Save(t.Context(), p))
	got, err = s.Plans.Plan(t.Context(), p.ID())
	require.NoError(t, err)
	requireSamePlan(t, p, got)
	assert.Equal(t, plan.PhaseAwaitingApproval, got.Phase())
}

// testPlanRings: a plan's rings (sizes, order and seed, bakes, budgets, a health check) and
// where it stands in them (the ring, its phase and since when, a halt's reason, a waiver)
// are stored, and the ring is saved like the status.
func testPlanRings(t *testing.T, s Store) {
	ids := make([]string, 10)
	for i := range ids {
		ids[i] = ulid.Make().String()
	}
	tenPct := plan.Share{Percent: 10}
	r := plan.Rollout{
		Waves: []plan.Wave{
			{Name: "one", Size: plan.Share{Count: 1}, Then: plan.ThenApprove, Bake: 2 * time.Second},
			{Name: "ten", Size: plan.Share{Percent: 12.5}, Then: plan.ThenAuto, MaxConcurrency: 3, FailureBudget: &tenPct,
				Health: &stage.Spec{Name: "health", Kind: "http", Params: map[string]any{"url": "http://h/{{.Params.wave}}"}, Timeout: 5 * time.Second}},
			{Name: "rest", Rest: true, Then: plan.ThenAuto},
		},
		Order: plan.OrderShuffle, Seed: 42, FailureBudget: &plan.Share{Count: 2},
	}
	_, bounds, err := r.Deal(slices.Repeat([]int{-1}, 10))
	require.NoError(t, err)
	require.Equal(t, []int{0, 1, 3, 10}, bounds, "1, 12.5 % of 10 rounded up, the rest")
	r.Bounds = bounds
	p, err := plan.New(plan.Draft{ID: ulid.Make().String(), Name: "rings", Stages: stages(), TaskIDs: ids, Rollout: r}, at(0))
	require.NoError(t, err)
	require.NoError(t, s.Plans.Create(t.Context(), p))
	got, err := s.Plans.Plan(t.Context(), p.ID())
	require.NoError(t, err)
	requireSamePlan(t, p, got)

	require.NoError(t, p.Start(at(1)))
	_, err = p.RingCompleted(0, at(2))
	require.NoError(t, err)
	require.NoError(t, s.Plans.Save(t.Context(), p))
	got, err = s.Plans.Plan(t.Context(), p.ID())
	require.NoError(t, err)
	requireSamePlan(t, p, got)
	assert.Equal(t, plan.RingBaking, got.Ring().Phase)
	assert.Equal(t, at(2).Add(2*time.Second), got.BakeEnds())

	_, err = got.ApproveRing(stage.Decision{Approved: true, By: "alice"}, at(3)) // early: ring "ten" starts
	require.NoError(t, err)
	require.NoError(t, got.HaltRing(1, "ring 1 (ten): 2 of 2 tenants failed", at(4)))
	require.NoError(t, s.Plans.Save(t.Context(), got))
	again, err := s.Plans.Plan(t.Context(), p.ID())
	require.NoError(t, err)
	requireSamePlan(t, got, again)
	assert.Equal(t, plan.Ring{Index: 1, Phase: plan.RingHalted, Since: at(4), HaltedIn: plan.RingRunning, Halt: "ring 1 (ten): 2 of 2 tenants failed"}, again.Ring())
	_, err = again.ApproveRing(stage.Decision{Approved: true, By: "alice"}, at(5))
	require.NoError(t, err)
	require.NoError(t, s.Plans.Save(t.Context(), again))
	last, err := s.Plans.Plan(t.Context(), p.ID())
	require.NoError(t, err)
	assert.True(t, last.Ring().Waived)
	assert.Equal(t, plan.RingRunning, last.Ring().Phase)
}

// testTaskWaitsAndIsDecided: a WAITING task's wait, and the decision that ends it, are stored.
func testTaskWaitsAndIsDecided(t *testing.T, s Store) {
	tk := newTask(t, ulid.Make().String(), "tenant-a", at(0))
	createTasks(t, s, tk)
	run, epoch := startRun(t, s, tk.ID(), at(1))
	cp := checkpoint.New(tk.ID())
	completeStage(t, run, cp, 0, epoch, at(2))
	require.NoError(t, run.Await("approval", "check the error rate", at(3)))
	require.NoError(t, s.Tasks.Save(t.Context(), run, cp))

	got, err := s.Tasks.Task(t.Context(), tk.ID())
	require.NoError(t, err)
	requireSameTask(t, run, got)
	require.Equal(t, task.Waiting, got.Status())
	require.NotNil(t, got.Wait())
	assert.Equal(t, "check the error rate", got.Wait().Message)

	require.NoError(t, got.Decide(stage.Decision{Approved: true, Comment: "looks good", DecidedAt: at(4)}, at(4)))
	require.NoError(t, s.Tasks.Save(t.Context(), got, nil))
	again, err := s.Tasks.Task(t.Context(), tk.ID())
	require.NoError(t, err)
	requireSameTask(t, got, again)
	assert.Equal(t, task.Pending, again.Status())
	assert.Nil(t, again.Wait())
	require.NotNil(t, again.Decision())
	assert.Equal(t, "looks good", again.Decision().Comment)
}

// testPlanRingAnalysis: a wave's analyses, and what they measured in a bake (counts, the
// latest measurements, the next time), are stored, saved like the ring, and read back by
// a compare-and-set; a halt by analysis is kept as such.
func testPlanRingAnalysis(t *testing.T, s Store) {
	ids := []string{ulid.Make().String(), ulid.Make().String(), ulid.Make().String()}
	r := plan.Rollout{Order: plan.OrderSubmission, Waves: []plan.Wave{
		{Name: "canary", Size: plan.Share{Count: 1}, Then: plan.ThenAuto, Bake: 10 * time.Second, Analysis: []stage.Spec{{
			Name: "error-rate", Kind: plan.AnalysisKind, Params: map[string]any{
				"address": "http://prom:9090", "query": `max(errors{wave="{{.Params.wave}}"})`, "successCondition": "result < 0.01",
				"interval": "2s", "failureLimit": float64(1),
			}}}},
		{Name: "rest", Rest: true, Then: plan.ThenAuto},
	}}
	_, bounds, err := r.Deal([]int{-1, -1, -1})
	require.NoError(t, err)
	r.Bounds = bounds
	p, err := plan.New(plan.Draft{ID: ulid.Make().String(), Name: "analysed", Stages: stages(), TaskIDs: ids, Rollout: r}, at(0))
	require.NoError(t, err)
	require.NoError(t, s.Plans.Create(t.Context(), p))
	require.NoError(t, p.Start(at(1)))
	_, err = p.RingCompleted(0, at(2))
	require.NoError(t, err)
	since := p.Ring().Since
	m := stage.Measurement{At: at(2), Value: "0.001", Verdict: stage.VerdictSuccessful, Message: "successCondition `result < 0.01` held"}
	_, err = p.RecordMeasurement(0, since, 0, m, `max(errors{wave="canary"})`)
	require.NoError(t, err)
	require.NoError(t, s.Plans.Save(t.Context(), p))
	got, err := s.Plans.Plan(t.Context(), p.ID())
	require.NoError(t, err)
	requireSamePlan(t, p, got)
	require.Len(t, got.Analysis().Analyses, 1)
	assert.Equal(t, stage.Tally{Successful: 1}, got.Analysis().Analyses[0].Tally)
	assert.Equal(t, at(4), got.Analysis().Analyses[0].Next, "an interval after the measurement")

	for _, sec := range []int{4, 6} {
		bad := m
		bad.At, bad.Value, bad.Verdict = at(sec), "0.5", stage.VerdictFailed
		saved, err := s.Plans.Update(t.Context(), p.ID(), func(p *plan.Plan) error {
			_, err := p.RecordMeasurement(0, since, 0, bad, `max(errors{wave="canary"})`)
			return err
		})
		require.NoError(t, err)
		got = saved
	}
	again, err := s.Plans.Plan(t.Context(), p.ID())
	require.NoError(t, err)
	requireSamePlan(t, got, again)
	assert.Equal(t, plan.RingHalted, again.Ring().Phase, "the second failure crosses failureLimit 1")
	assert.True(t, again.Ring().Analysis)
	assert.Len(t, again.Analysis().Analyses[0].Latest, 3)
}
