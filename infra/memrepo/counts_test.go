package memrepo_test

import (
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/memrepo"
)

func TestStatusCountsReportEveryStatus(t *testing.T) {
	t.Parallel()
	db := memrepo.New()
	plans, tasks := db.StatusCounts()
	require.Len(t, plans, len(plan.Statuses))
	require.Len(t, tasks, len(task.Statuses))
	for _, s := range plan.Statuses {
		assert.Zero(t, plans[s], s)
	}
	for _, s := range task.Statuses {
		assert.Zero(t, tasks[s], s)
	}
}

func TestStatusCountsCountStoredStatuses(t *testing.T) {
	t.Parallel()
	db := memrepo.New()
	now := time.Now().UTC()
	stages := []stage.Spec{{Name: "one", Kind: "noop"}}
	planID := ulid.Make().String()
	var tks []*task.Task
	for _, tenant := range []string{"a", "b", "c"} {
		tk, err := task.New(planID, tenant, nil, stages, now)
		require.NoError(t, err)
		tks = append(tks, tk)
	}
	ids := []string{tks[0].ID(), tks[1].ID(), tks[2].ID()}
	p, err := plan.New(plan.Draft{ID: planID, Name: "counts", Stages: stages, TaskIDs: ids}, now)
	require.NoError(t, err)
	require.NoError(t, db.CreatePlan(t.Context(), p, tks))

	require.NoError(t, tks[0].Start(1, now))
	require.NoError(t, tks[1].Start(1, now))
	require.NoError(t, tks[1].Fail(task.Failure{Stage: "one", Class: stage.ClassPermanent, Message: "no"}, now))
	db.Tasks().Put(tks[0], nil)
	db.Tasks().Put(tks[1], nil)

	plans, tasks := db.StatusCounts()
	assert.Equal(t, 1, plans[p.Status()])
	assert.Equal(t, map[task.Status]int{
		task.Pending: 1, task.Running: 1, task.Failed: 1,
		task.Waiting: 0, task.Paused: 0, task.Completed: 0, task.Cancelled: 0, task.Interrupted: 0,
		task.RolledBack: 0, task.RollbackFailed: 0, task.Skipped: 0,
	}, tasks)
}
