package repotest

import (
	"testing"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// testLatestWithCheckpoint: a tenant's latest task and its checkpoint, read together, are
// what Latest and Checkpoint read one after the other; a task without a checkpoint reads
// with none, and a tenant that moved on to a new task reads the new task without the old
// task's checkpoint.
func testLatestWithCheckpoint(t *testing.T, s Store) {
	ctx := t.Context()
	ran, fresh, run := ranAndFresh(t, s, "lwc")

	_, _, err := s.Tasks.LatestWithCheckpoint(ctx, "lwc-nobody")
	require.ErrorIs(t, err, task.ErrNotFound)

	got, cp, err := s.Tasks.LatestWithCheckpoint(ctx, "lwc-ran")
	require.NoError(t, err)
	want, err := s.Tasks.Latest(ctx, "lwc-ran")
	require.NoError(t, err)
	requireSameTask(t, want, got)
	require.NotNil(t, cp)
	requireSameState(t, readCheckpoint(t, s, ran.ID()).State(), cp.State())
	assert.Equal(t, 1, cp.Next())

	got, cp, err = s.Tasks.LatestWithCheckpoint(ctx, "lwc-fresh")
	require.NoError(t, err)
	requireSameTask(t, fresh, got)
	assert.Nil(t, cp, "a task that ran no stage has no checkpoint")

	endTask(t, s, run)
	next := newTask(t, ulid.Make().String(), "lwc-ran", at(10))
	createTasks(t, s, next)
	got, cp, err = s.Tasks.LatestWithCheckpoint(ctx, "lwc-ran")
	require.NoError(t, err)
	requireSameTask(t, next, got)
	assert.Nil(t, cp, "the tenant's new task has no checkpoint yet")
}

// ranAndFresh stores two tasks of one plan, for tenants <prefix>-ran and <prefix>-fresh: the
// first has run its first stage (run is the run's copy, its checkpoint saved), the second
// has not started.
func ranAndFresh(t *testing.T, s Store, prefix string) (ran, fresh, run *task.Task) {
	t.Helper()
	ran = newTask(t, ulid.Make().String(), prefix+"-ran", at(0))
	fresh = newTask(t, ran.PlanID(), prefix+"-fresh", at(0))
	createTasks(t, s, ran, fresh)
	run, epoch := startRun(t, s, ran.ID(), at(1))
	saved := checkpoint.New(ran.ID())
	completeStage(t, run, saved, 0, epoch, at(2))
	require.NoError(t, s.Tasks.Save(t.Context(), run, saved))
	return ran, fresh, run
}

// testPeek: Peek reads a task as Task does, the store's own writes included (a copy that may
// be stale is one written by another store), and hands out an independent aggregate; an
// unknown task is task.ErrNotFound.
func testPeek(t *testing.T, s Store) {
	ctx := t.Context()
	tk := newTask(t, ulid.Make().String(), "tenant-a", at(0))
	createTasks(t, s, tk)

	_, err := s.Tasks.Peek(ctx, ulid.Make().String())
	require.ErrorIs(t, err, task.ErrNotFound)

	got, err := s.Tasks.Peek(ctx, tk.ID())
	require.NoError(t, err)
	requireSameTask(t, tk, got)

	run, _ := startRun(t, s, tk.ID(), at(1))
	require.NoError(t, s.Tasks.Save(ctx, run, nil))
	got, err = s.Tasks.Peek(ctx, tk.ID())
	require.NoError(t, err)
	requireSameTask(t, run, got)
	assert.Equal(t, task.Running, got.Status())

	require.NoError(t, got.Pause(at(2))) // not saved
	again, err := s.Tasks.Peek(ctx, tk.ID())
	require.NoError(t, err)
	assert.Equal(t, task.Running, again.Status(), "reads return independent aggregates")
}

// testPlanRefresh checks that Refresh, whatever a store keeps, leaves the plan readable as
// stored, ended or not, and ignores a plan it does not know.
func testPlanRefresh(t *testing.T, s Store) {
	ctx := t.Context()
	s.Plans.Refresh(ctx, ulid.Make().String())
	p := createPlan(t, s, "", at(0))
	require.NoError(t, p.Start(at(1)))
	require.NoError(t, s.Plans.Save(ctx, p))
	s.Plans.Refresh(ctx, p.ID())
	got, err := s.Plans.Plan(ctx, p.ID())
	require.NoError(t, err)
	requireSamePlan(t, p, got)

	require.NoError(t, got.Complete(at(2)))
	require.NoError(t, s.Plans.Save(ctx, got))
	s.Plans.Refresh(ctx, p.ID())
	again, err := s.Plans.Plan(ctx, p.ID())
	require.NoError(t, err)
	requireSamePlan(t, got, again)
	assert.Equal(t, plan.Completed, again.Status())
}
