package repotest

import (
	"testing"

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
	promoted, err := p.PassCanary()
	require.NoError(t, err)
	require.False(t, promoted)
	require.NoError(t, s.Plans.Save(t.Context(), p))
	got, err = s.Plans.Plan(t.Context(), p.ID())
	require.NoError(t, err)
	requireSamePlan(t, p, got)
	assert.Equal(t, plan.PhaseAwaitingApproval, got.Phase())
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
