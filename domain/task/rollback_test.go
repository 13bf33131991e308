package task_test

import (
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// undoable returns a PENDING task of stages a, b, c where a and c have an undo.
func undoable(t *testing.T) *task.Task {
	t.Helper()
	st := specs("a", "b", "c")
	st[0].Undo = &stage.Spec{Name: "a", Kind: "noop"}
	st[2].Undo = &stage.Spec{Name: "c", Kind: "noop"}
	tk, err := task.New(ulid.Make().String(), "tenant-1", nil, st, t0)
	require.NoError(t, err)
	return tk
}

// A forward run that fails at c turns back under the same lease as a new run, undoes b and a
// newest first, and ends ROLLED_BACK with the forward failure as its last error; a retry then
// runs it forward again from the first stage.
func TestARollbackUndoesTheCompletedStagesNewestFirst(t *testing.T) {
	t.Parallel()
	tk := undoable(t)
	now := t0
	require.NoError(t, tk.Start(1, now))
	require.NoError(t, tk.CompleteStage(0, now))
	require.NoError(t, tk.CompleteStage(1, now))
	boom := task.Failure{Stage: "c", Attempt: 1, Class: stage.ClassPermanent, Message: "boom"}
	require.NoError(t, tk.TurnBack(&boom, now))
	assert.True(t, tk.RollingBack())
	assert.Equal(t, 2, tk.Attempt(), "a rollback is a run of its own")
	require.ErrorIs(t, tk.UndoStage(0, now), task.ErrStageOutOfOrder, "b is newer than a: undone first")
	require.ErrorIs(t, tk.RolledBack(now), task.ErrStageOutOfOrder, "two stages are still applied")
	require.ErrorIs(t, tk.CompleteStage(2, now), task.ErrInvalidTransition)
	require.NoError(t, tk.UndoStage(1, now))
	require.NoError(t, tk.Record(task.Attempt{StageIndex: 0, Stage: "a", Run: 2, Attempt: 1, StartedAt: now, EndedAt: now, Outcome: task.OutcomeSucceeded, Undo: true}))
	require.NoError(t, tk.UndoStage(0, now))
	require.NoError(t, tk.RolledBack(now))
	assert.Equal(t, task.RolledBack, tk.Status())
	assert.Equal(t, &boom, tk.LastError())

	loaded, err := task.Load(tk.State())
	require.NoError(t, err)
	assert.True(t, loaded.RollingBack())
	assert.True(t, loaded.Ledger()[0].Undo)

	require.NoError(t, tk.Retry(0, now))
	assert.False(t, tk.RollingBack(), "nothing is left to undo: a retry runs forward")
	assert.Equal(t, 3, tk.Attempt())
}

// A rollback whose undo fails ends ROLLBACK_FAILED naming the undo; a retry, or another
// rollback, goes on from the stages still applied.
func TestAFailedUndoEndsTheRollbackAndARetryGoesOnUndoing(t *testing.T) {
	t.Parallel()
	tk := undoable(t)
	now := t0
	require.NoError(t, tk.Start(1, now))
	require.NoError(t, tk.CompleteStage(0, now))
	require.NoError(t, tk.CompleteStage(1, now))
	require.NoError(t, tk.CompleteStage(2, now))
	require.NoError(t, tk.Complete(now))
	require.NoError(t, tk.Rollback(now))
	assert.Equal(t, task.Pending, tk.Status())
	require.NoError(t, tk.Start(2, now))
	require.NoError(t, tk.UndoStage(2, now))
	require.NoError(t, tk.Fail(task.Failure{Stage: "b", Class: stage.ClassPermanent, Message: "undo failed"}, now))
	assert.Equal(t, task.RollbackFailed, tk.Status())
	assert.Equal(t, 2, tk.CurrentStage())
	require.NoError(t, tk.Retry(2, now))
	assert.True(t, tk.RollingBack(), "a retry of a failed rollback goes on rolling back")
	require.ErrorIs(t, tk.Rollback(now), task.ErrInvalidTransition, "PENDING: already on its way")
}

// A rollback cut inside an undo records the undo's attempt (in doubt when its run was lost),
// and the next call of that undo sends the in-doubt attempt's key; a forward attempt of the
// same stage in doubt does not count for the undo.
func TestAnUndoCutShortIsRecordedAsTheUndosAttempt(t *testing.T) {
	t.Parallel()
	tk := undoable(t)
	now := t0
	require.NoError(t, tk.Start(1, now))
	require.NoError(t, tk.CompleteStage(0, now))
	require.NoError(t, tk.Abandon(2, task.Failure{Stage: "b", Class: stage.ClassLeaseLost, Message: "gone"}, now.Add(time.Second)))
	_, forwardInDoubt := tk.InDoubt(1)
	require.True(t, forwardInDoubt)
	require.NoError(t, tk.Rollback(now))
	_, ok := tk.InDoubt(1)
	assert.False(t, ok, "the forward attempt in doubt is not the undo's")
	require.NoError(t, tk.Start(3, now))
	require.NoError(t, tk.Abandon(4, task.Failure{Stage: "a", Class: stage.ClassLeaseLost, Message: "gone"}, now.Add(2*time.Second)))
	last := tk.Ledger()[tk.LedgerLen()-1]
	assert.True(t, last.Undo)
	assert.Equal(t, 0, last.StageIndex, "a is the newest stage applied")
	assert.Equal(t, task.OutcomeInDoubt, last.Outcome)
	require.NoError(t, tk.Retry(tk.CurrentStage(), now))
	a, ok := tk.InDoubt(0)
	require.True(t, ok)
	assert.Equal(t, last.Run, a.Run)
}

// Load refuses a state no transition makes.
func TestLoadRefusesARollbackOutOfPlace(t *testing.T) {
	t.Parallel()
	tk := undoable(t)
	now := t0
	require.NoError(t, tk.Start(1, now))
	require.NoError(t, tk.CompleteStage(0, now))
	require.NoError(t, tk.TurnBack(&task.Failure{Stage: "b", Class: stage.ClassPermanent}, now))
	require.NoError(t, tk.Fail(task.Failure{Stage: "a", Class: stage.ClassPermanent}, now))
	for name, mutate := range map[string]func(*task.State){
		"rolled back with a stage applied": func(s *task.State) { s.Status = task.RolledBack },
		"rollback failed without one":      func(s *task.State) { s.Rollback = false },
	} {
		s := tk.State()
		mutate(&s)
		_, err := task.Load(s)
		require.ErrorIs(t, err, task.ErrInvalid, name)
	}
}

// An operator's rollback of a FAILED task keeps why it failed; a ROLLED_BACK task says how to
// go on.
func TestARollbackKeepsTheFailureItAnswersFor(t *testing.T) {
	t.Parallel()
	tk := undoable(t)
	now := t0
	require.NoError(t, tk.Start(1, now))
	require.NoError(t, tk.CompleteStage(0, now))
	boom := task.Failure{Stage: "b", Attempt: 1, Class: stage.ClassPermanent, Message: "404"}
	require.NoError(t, tk.Fail(boom, now))
	require.NoError(t, tk.Rollback(now))
	assert.Equal(t, &boom, tk.LastError())
	require.NoError(t, tk.Start(2, now))
	require.NoError(t, tk.UndoStage(0, now))
	require.NoError(t, tk.RolledBack(now))
	assert.Equal(t, &boom, tk.LastError(), "still the failure once rolled back")
	var te *task.TransitionError
	require.ErrorAs(t, tk.Rollback(now), &te)
	assert.Contains(t, te.Reason, "retry")
}
