package task_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// The taker of a task whose run is gone (Abandon) records the attempt the lost run was in as
// in doubt when that attempt may have begun; the run's own interruption (InterruptStage) and a
// cut during the backoff stay interrupted.
func TestAbandonRecordsTheAttemptUnderwayAsInDoubt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		prepare func(t *testing.T, tk *task.Task)
		now     time.Time
		want    task.Attempt // but its error
	}{
		{
			name: "the first attempt of the run's first stage",
			now:  t0.Add(time.Minute),
			want: task.Attempt{StageIndex: 0, Stage: "a", Run: 1, Attempt: 1, StartedAt: t0, EndedAt: t0.Add(time.Minute),
				Outcome: task.OutcomeInDoubt},
		},
		{
			name: "the first attempt after a completed stage",
			prepare: func(t *testing.T, tk *task.Task) {
				require.NoError(t, tk.Record(task.Attempt{StageIndex: 0, Stage: "a", Run: 1, Attempt: 1, StartedAt: t0,
					EndedAt: t0.Add(3 * time.Second), Outcome: task.OutcomeSucceeded}))
				require.NoError(t, tk.CompleteStage(0, t0.Add(3*time.Second)))
			},
			now: t0.Add(time.Minute),
			want: task.Attempt{StageIndex: 1, Stage: "b", Run: 1, Attempt: 1, StartedAt: t0.Add(3 * time.Second),
				EndedAt: t0.Add(time.Minute), Outcome: task.OutcomeInDoubt},
		},
		{
			name:    "the attempt after a failed one whose backoff ran out",
			prepare: func(t *testing.T, tk *task.Task) { require.NoError(t, tk.Record(failedOnce)) },
			now:     failedAt.Add(time.Minute),
			want: task.Attempt{StageIndex: 0, Stage: "a", Run: 1, Attempt: 2, StartedAt: failedAt.Add(4 * time.Second),
				EndedAt: failedAt.Add(time.Minute), Outcome: task.OutcomeInDoubt},
		},
		{
			name:    "cut during the backoff: the attempt never began, interrupted",
			prepare: func(t *testing.T, tk *task.Task) { require.NoError(t, tk.Record(failedOnce)) },
			now:     failedAt.Add(time.Second),
			want: task.Attempt{StageIndex: 0, Stage: "a", Run: 1, Attempt: 2, StartedAt: failedAt.Add(time.Second),
				EndedAt: failedAt.Add(time.Second), Outcome: task.OutcomeInterrupted},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			abandoned, own := running(t), running(t)
			if tt.prepare != nil {
				tt.prepare(t, abandoned)
				tt.prepare(t, own)
			}
			before := abandoned.LedgerLen()
			require.NoError(t, abandoned.Abandon(2, lostOwner, tt.now))
			assert.Equal(t, task.Interrupted, abandoned.Status())
			assert.Equal(t, uint64(2), abandoned.Fence())
			require.Equal(t, before+1, abandoned.LedgerLen(), "one entry for the attempt underway")
			got := lastEntry(t, abandoned)
			assert.Contains(t, got.Error, lostOwner.Message)
			got.Error = ""
			tt.want.Class = stage.ClassLeaseLost
			assert.Equal(t, tt.want, got)

			loaded, err := task.Load(abandoned.State())
			require.NoError(t, err, "the store can load an in-doubt entry")
			assert.Equal(t, abandoned.Ledger(), loaded.Ledger())

			require.NoError(t, own.InterruptStage(lostOwner, tt.now))
			assert.Equal(t, task.OutcomeInterrupted, lastEntry(t, own).Outcome, "the run's own interruption is not in doubt")
		})
	}
}

func TestAbandonRecordsNothingWhenNoAttemptWasUnderway(t *testing.T) {
	t.Parallel()
	tk := running(t)
	require.NoError(t, tk.CompleteStage(0, t0))
	require.NoError(t, tk.CompleteStage(1, t0))
	require.NoError(t, tk.Abandon(2, lostOwner, t0.Add(time.Minute)))
	assert.Zero(t, tk.LedgerLen())
	_, ok := tk.InDoubt(1)
	assert.False(t, ok)
}

func TestInDoubtOutcomeIsValid(t *testing.T) {
	t.Parallel()
	assert.True(t, task.OutcomeInDoubt.Valid())
	assert.Contains(t, task.Outcomes, task.OutcomeInDoubt)
	assert.Equal(t, task.Outcome("in_doubt"), task.OutcomeInDoubt, "the stored and served form")
	tk := running(t)
	require.NoError(t, tk.Record(task.Attempt{StageIndex: 0, Stage: "a", Run: 1, Attempt: 1, StartedAt: t0, EndedAt: t0,
		Outcome: task.OutcomeInDoubt, Class: stage.ClassLeaseLost}))
	_, err := task.Load(tk.State())
	require.NoError(t, err)
}

// entry is an attempt of stage a (index 0) or b (index 1) in run run, ended with outcome.
func entry(stageIndex, run, attempt int, outcome task.Outcome) task.Attempt {
	a := task.Attempt{StageIndex: stageIndex, Stage: []string{"a", "b"}[stageIndex], Run: run, Attempt: attempt,
		StartedAt: t0, EndedAt: t0, Outcome: outcome}
	if outcome != task.OutcomeSucceeded {
		a.Class, a.Error = stage.ClassLeaseLost, "lost"
	}
	return a
}

// withLedger returns a task with stages a and b, INTERRUPTED in run runs with ledger.
func withLedger(t *testing.T, runs int, ledger ...task.Attempt) *task.Task {
	t.Helper()
	s := newTask(t).State()
	s.Status, s.Attempt, s.StartedAt, s.UpdatedAt = task.Interrupted, runs, t0, t0
	s.LastError, s.Ledger, s.Fence = &lostOwner, ledger, uint64(runs)
	tk, err := task.Load(s)
	require.NoError(t, err)
	return tk
}

func TestInDoubtTellsWhichRunsKeyToSendAgain(t *testing.T) {
	t.Parallel()
	const (
		ok      = task.OutcomeSucceeded
		failed  = task.OutcomeFailed
		cut     = task.OutcomeInterrupted
		inDoubt = task.OutcomeInDoubt
	)
	tests := []struct {
		name    string
		runs    int
		ledger  []task.Attempt
		stage   int
		wantRun int // 0: not in doubt
		want    int // the returned attempt's stage attempt
	}{
		{name: "no attempt of the stage", runs: 1, ledger: []task.Attempt{entry(0, 1, 1, ok)}, stage: 1},
		{name: "empty ledger", runs: 1, stage: 0},
		{name: "latest in doubt", runs: 1, ledger: []task.Attempt{entry(0, 1, 1, ok), entry(1, 1, 1, inDoubt)},
			stage: 1, wantRun: 1, want: 1},
		{name: "in doubt after a failed attempt of its run", runs: 2,
			ledger: []task.Attempt{entry(0, 1, 1, ok), entry(0, 2, 1, failed), entry(0, 2, 2, inDoubt)},
			stage:  0, wantRun: 2, want: 2},
		{name: "another stage's attempt in doubt", runs: 1, ledger: []task.Attempt{entry(0, 1, 1, inDoubt)}, stage: 1},
		{name: "a later run succeeded", runs: 2, ledger: []task.Attempt{entry(0, 1, 1, inDoubt), entry(0, 2, 1, ok)}, stage: 0},
		{name: "a later run's attempt was answered: failed", runs: 2,
			ledger: []task.Attempt{entry(0, 1, 1, inDoubt), entry(0, 2, 1, failed)}, stage: 0},
		{name: "a later run's own interruption", runs: 2,
			ledger: []task.Attempt{entry(0, 1, 1, inDoubt), entry(0, 2, 1, cut)}, stage: 0},
		{name: "interrupted, not in doubt", runs: 1, ledger: []task.Attempt{entry(0, 1, 1, cut)}, stage: 0},
		{name: "in doubt twice in a row: the first run's key, which the second sent", runs: 3,
			ledger: []task.Attempt{entry(0, 1, 1, ok), entry(1, 1, 1, inDoubt), entry(0, 2, 1, ok), entry(1, 2, 1, failed),
				entry(1, 2, 2, inDoubt), entry(1, 3, 1, inDoubt)},
			stage: 1, wantRun: 1, want: 1},
		{name: "a chain broken by an answer: from the answer on", runs: 4,
			ledger: []task.Attempt{entry(0, 1, 1, inDoubt), entry(0, 2, 1, failed), entry(0, 3, 1, inDoubt),
				entry(0, 4, 1, inDoubt)},
			stage: 0, wantRun: 3, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tk := withLedger(t, tt.runs, tt.ledger...)
			got, found := tk.InDoubt(tt.stage)
			if tt.wantRun == 0 {
				assert.False(t, found)
				assert.Zero(t, got)
				return
			}
			require.True(t, found)
			assert.Equal(t, task.OutcomeInDoubt, got.Outcome)
			assert.Equal(t, tt.stage, got.StageIndex)
			assert.Equal(t, tt.wantRun, got.Run)
			assert.Equal(t, tt.want, got.Attempt)
		})
	}
}

// An abandoned run's in-doubt attempt, retried: the next run's call of the stage must send
// its key; once that call is answered, it need not.
func TestInDoubtAfterAbandonAndRetry(t *testing.T) {
	t.Parallel()
	tk := running(t)
	require.NoError(t, tk.Abandon(2, lostOwner, t0.Add(time.Minute)))
	a, found := tk.InDoubt(0)
	require.True(t, found)
	assert.Equal(t, 1, a.Run)

	require.NoError(t, tk.Retry(0, t0.Add(2*time.Minute)))
	require.NoError(t, tk.Start(3, t0.Add(2*time.Minute)))
	a, found = tk.InDoubt(0)
	require.True(t, found, "the retry has not called the stage yet")
	assert.Equal(t, 1, a.Run)

	require.NoError(t, tk.Record(task.Attempt{StageIndex: 0, Stage: "a", Run: 2, Attempt: 1,
		StartedAt: t0.Add(2 * time.Minute), EndedAt: t0.Add(3 * time.Minute), Outcome: task.OutcomeSucceeded}))
	_, found = tk.InDoubt(0)
	assert.False(t, found, "answered")
}
