package repotest

import (
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// testInterruptedAttemptIsKept: a reaper's takeover of a run that is gone (a fence bump, then
// Update with Abandon) stores the attempt the run was in as interrupted, with the write that
// interrupts the task and no other; it reads back as written, and a retry keeps it.
func testInterruptedAttemptIsKept(t *testing.T, s Store) {
	ctx := t.Context()
	tk := newTask(t, ulid.Make().String(), "tenant-a", at(0))
	createTasks(t, s, tk)
	run, _ := startRun(t, s, tk.ID(), at(1))
	require.NoError(t, run.Record(task.Attempt{
		StageIndex: 0, Stage: "build", Run: 1, Attempt: 1, StartedAt: at(2), EndedAt: at(3),
		Outcome: task.OutcomeFailed, Class: stage.ClassRetryable, Error: "503", Code: 503, Backoff: 2 * time.Second,
	}))
	require.NoError(t, s.Tasks.Save(ctx, run, nil))
	saved := run.Version()

	taker, err := s.Tasks.BumpFence(ctx, tk.ID())
	require.NoError(t, err)
	lost := task.Failure{Stage: "build", Class: stage.ClassLeaseLost, Message: "owner lost"}
	reaped, err := s.Tasks.Update(ctx, tk.ID(), func(cur *task.Task) (*checkpoint.Checkpoint, error) {
		return nil, cur.Abandon(taker.Fence(), lost, at(10))
	})
	require.NoError(t, err)
	assert.Equal(t, saved+2, reaped.Version(), "the fence bump, then one write: the entry rides with the interruption")

	got, err := s.Tasks.Task(ctx, tk.ID())
	require.NoError(t, err)
	requireSameTask(t, reaped, got)
	require.Len(t, got.Ledger(), 2)
	cut := got.Ledger()[1]
	assert.NotEmpty(t, cut.Error)
	cut.Error = ""
	requireSameState(t, task.Attempt{StageIndex: 0, Stage: "build", Run: 1, Attempt: 2, StartedAt: at(5), EndedAt: at(10),
		Outcome: task.OutcomeInDoubt, Class: stage.ClassLeaseLost}, cut,
		"attempt 2, at the earliest when it was due, ended when the reaper learned of it")

	retried, err := s.Tasks.Update(ctx, tk.ID(), func(cur *task.Task) (*checkpoint.Checkpoint, error) {
		return nil, cur.Retry(0, at(11))
	})
	require.NoError(t, err)
	assert.Nil(t, retried.LastError())
	requireSameState(t, got.Ledger(), retried.Ledger(), "a retry keeps the ledger")
}
