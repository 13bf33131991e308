package task_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

var (
	lostOwner = task.Failure{Stage: "a", Class: stage.ClassLeaseLost, Message: "owner lost"}
	failedAt  = t0.Add(10 * time.Second)
	// failedOnce is attempt 1 of stage a in run 1, failed and retried after 4 s.
	failedOnce = task.Attempt{StageIndex: 0, Stage: "a", Run: 1, Attempt: 1, StartedAt: t0.Add(5 * time.Second),
		EndedAt: failedAt, Outcome: task.OutcomeFailed, Class: stage.ClassRetryable, Error: "503", Code: 503, Backoff: 4 * time.Second}
)

// running returns a task with stages a and b, RUNNING since t0 in run 1.
func running(t *testing.T) *task.Task {
	t.Helper()
	tk := newTask(t)
	require.NoError(t, tk.Start(1, t0))
	return tk
}

// lastEntry returns the last entry of tk's ledger.
func lastEntry(t *testing.T, tk *task.Task) task.Attempt {
	t.Helper()
	ledger := tk.Ledger()
	require.NotEmpty(t, ledger)
	return ledger[len(ledger)-1]
}

func TestInterruptStageRecordsTheAttemptUnderway(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		prepare func(t *testing.T, tk *task.Task)
		now     time.Time
		want    task.Attempt // but its error
	}{
		{
			name: "the first attempt of the run's first stage: from the run's start",
			now:  t0.Add(time.Minute),
			want: task.Attempt{StageIndex: 0, Stage: "a", Run: 1, Attempt: 1, StartedAt: t0, EndedAt: t0.Add(time.Minute)},
		},
		{
			name: "the first attempt after a completed stage: from that stage's end",
			prepare: func(t *testing.T, tk *task.Task) {
				require.NoError(t, tk.Record(task.Attempt{StageIndex: 0, Stage: "a", Run: 1, Attempt: 1, StartedAt: t0,
					EndedAt: t0.Add(3 * time.Second), Outcome: task.OutcomeSucceeded}))
				require.NoError(t, tk.CompleteStage(0, t0.Add(3*time.Second)))
			},
			now:  t0.Add(time.Minute),
			want: task.Attempt{StageIndex: 1, Stage: "b", Run: 1, Attempt: 1, StartedAt: t0.Add(3 * time.Second), EndedAt: t0.Add(time.Minute)},
		},
		{
			name:    "after a failed attempt whose backoff ran out: the next one, from when it was due",
			prepare: func(t *testing.T, tk *task.Task) { require.NoError(t, tk.Record(failedOnce)) },
			now:     failedAt.Add(time.Minute),
			want: task.Attempt{StageIndex: 0, Stage: "a", Run: 1, Attempt: 2, StartedAt: failedAt.Add(4 * time.Second),
				EndedAt: failedAt.Add(time.Minute)},
		},
		{
			name:    "cut during the backoff: the next attempt never started",
			prepare: func(t *testing.T, tk *task.Task) { require.NoError(t, tk.Record(failedOnce)) },
			now:     failedAt.Add(time.Second),
			want: task.Attempt{StageIndex: 0, Stage: "a", Run: 1, Attempt: 2, StartedAt: failedAt.Add(time.Second),
				EndedAt: failedAt.Add(time.Second)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tk := running(t)
			if tt.prepare != nil {
				tt.prepare(t, tk)
			}
			before := tk.LedgerLen()
			require.NoError(t, tk.InterruptStage(lostOwner, tt.now))
			assert.Equal(t, task.Interrupted, tk.Status())
			assert.Equal(t, lostOwner, *tk.LastError())
			require.Equal(t, before+1, tk.LedgerLen(), "one entry for the attempt underway")

			got := lastEntry(t, tk)
			assert.Contains(t, got.Error, lostOwner.Message, "the entry says why")
			got.Error = ""
			tt.want.Outcome, tt.want.Class = task.OutcomeInterrupted, stage.ClassLeaseLost
			assert.Equal(t, tt.want, got)

			loaded, err := task.Load(tk.State())
			require.NoError(t, err, "the store can load what the transition made")
			assert.Equal(t, tk.Ledger(), loaded.Ledger())
		})
	}
}

func TestACutDuringTheBackoffSaysWhenTheAttemptWasDue(t *testing.T) {
	t.Parallel()
	tk := running(t)
	require.NoError(t, tk.Record(failedOnce))
	require.NoError(t, tk.InterruptStage(lostOwner, failedAt.Add(time.Second)))
	due := failedAt.Add(failedOnce.Backoff).Format(time.RFC3339Nano)
	assert.Contains(t, lastEntry(t, tk).Error, due)
}

func TestNoEntryIsRecordedWhenNoAttemptWasUnderway(t *testing.T) {
	t.Parallel()
	later := t0.Add(time.Minute)
	tests := []struct {
		name string
		do   func(t *testing.T, tk *task.Task) error
		want int // ledger length afterwards
	}{
		{"the run recorded the attempt it was cut in", func(t *testing.T, tk *task.Task) error {
			require.NoError(t, tk.Record(task.Attempt{StageIndex: 0, Stage: "a", Run: 1, Attempt: 1, StartedAt: t0,
				EndedAt: later, Outcome: task.OutcomeInterrupted, Class: stage.ClassShutdown, Error: "executor shutting down"}))
			return tk.InterruptStage(task.Failure{Stage: "a", Class: stage.ClassShutdown}, later)
		}, 1},
		{"every stage ran", func(t *testing.T, tk *task.Task) error {
			require.NoError(t, tk.CompleteStage(0, t0))
			require.NoError(t, tk.CompleteStage(1, t0))
			return tk.InterruptStage(lostOwner, later)
		}, 0},
		{"stopped at a stage boundary", func(_ *testing.T, tk *task.Task) error {
			return tk.Interrupt(task.Failure{Stage: "a", Class: stage.ClassShutdown}, later)
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tk := running(t)
			require.NoError(t, tt.do(t, tk))
			assert.Equal(t, task.Interrupted, tk.Status())
			assert.Equal(t, tt.want, tk.LedgerLen())
		})
	}

	t.Run("a queued task that never started", func(t *testing.T) {
		t.Parallel()
		tk := newTask(t)
		require.NoError(t, tk.Interrupt(task.Failure{Class: stage.ClassShutdown}, later))
		assert.Zero(t, tk.LedgerLen())
		require.ErrorIs(t, newTask(t).InterruptStage(lostOwner, later), task.ErrInvalidTransition, "only a RUNNING task is cut inside a stage")
	})
}

func TestAbandonRecordsTheAttemptTheLostRunWasIn(t *testing.T) {
	t.Parallel()
	tk := running(t)
	require.NoError(t, tk.Record(failedOnce))
	reapedAt := failedAt.Add(time.Minute)
	require.NoError(t, tk.Abandon(2, lostOwner, reapedAt))
	assert.Equal(t, task.Interrupted, tk.Status())
	got := lastEntry(t, tk)
	assert.Equal(t, task.OutcomeInDoubt, got.Outcome, "the lost run may have been inside the call (indoubt_test.go)")
	assert.Equal(t, stage.ClassLeaseLost, got.Class)
	assert.Equal(t, 2, got.Attempt)
	assert.Equal(t, reapedAt, got.EndedAt, "ended at the latest when the reaper learned of it")
}

func TestCancelRecordsTheAttemptOfARunningTaskOnly(t *testing.T) {
	t.Parallel()
	byOperator := &task.Failure{Class: stage.ClassCancelled, Message: "cancelled by operator"}
	tests := []struct {
		name      string
		from      task.Status
		reason    *task.Failure
		wantEntry bool
	}{
		{"running, with a reason", task.Running, byOperator, true},
		{"running, without a reason", task.Running, nil, true},
		{"pending", task.Pending, byOperator, false},
		{"paused", task.Paused, byOperator, false},
		{"waiting", task.Waiting, byOperator, false},
		{"interrupted", task.Interrupted, byOperator, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tk := inStatus(t, tt.from)
			before := tk.LedgerLen()
			require.NoError(t, tk.Cancel(tt.reason, t0.Add(time.Hour)))
			assert.Equal(t, task.Cancelled, tk.Status())
			if !tt.wantEntry {
				assert.Equal(t, before, tk.LedgerLen())
				return
			}
			require.Equal(t, before+1, tk.LedgerLen())
			got := lastEntry(t, tk)
			assert.Equal(t, task.OutcomeInterrupted, got.Outcome)
			assert.Equal(t, stage.ClassCancelled, got.Class)
			assert.Equal(t, t0.Add(time.Hour), got.EndedAt)
		})
	}
}

func TestRetryKeepsTheLedgerAndClearsTheLastError(t *testing.T) {
	t.Parallel()
	tk := running(t)
	require.NoError(t, tk.Record(failedOnce))
	require.NoError(t, tk.InterruptStage(lostOwner, failedAt.Add(time.Second)))
	ledger := tk.Ledger()
	require.NoError(t, tk.Retry(0, failedAt.Add(time.Minute)))
	assert.Nil(t, tk.LastError(), "a retry clears the last error")
	assert.Equal(t, ledger, tk.Ledger(), "the ledger keeps what stopped the run, once")
}

// A task stored before interrupted attempts were recorded (the old Interrupt inside a stage)
// gets the entry from the next run.
func TestRetryRecordsTheAttemptAStaleTaskWasCutIn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		prepare   func(t *testing.T, tk *task.Task)
		end       func(tk *task.Task) error
		wantEntry *task.Attempt // but its error
	}{
		{
			name:    "interrupted after the backoff: the next attempt, from when it was due",
			prepare: func(t *testing.T, tk *task.Task) { require.NoError(t, tk.Record(failedOnce)) },
			end:     func(tk *task.Task) error { return tk.Interrupt(lostOwner, failedAt.Add(time.Minute)) },
			wantEntry: &task.Attempt{StageIndex: 0, Stage: "a", Run: 1, Attempt: 2, StartedAt: failedAt.Add(4 * time.Second),
				EndedAt: failedAt.Add(time.Minute), Outcome: task.OutcomeInterrupted, Class: stage.ClassLeaseLost},
		},
		{
			name:    "cancelled during the backoff",
			prepare: func(t *testing.T, tk *task.Task) { require.NoError(t, tk.Record(failedOnce)) },
			end: func(tk *task.Task) error {
				// as an old executor did it: the run's Cancel, with no entry
				s := tk.State()
				s.Status, s.FinishedAt, s.UpdatedAt = task.Cancelled, failedAt.Add(time.Second), failedAt.Add(time.Second)
				s.LastError = &task.Failure{Stage: "a", Class: stage.ClassCancelled, Message: "cancelled by operator"}
				loaded, err := task.Load(s)
				if err == nil {
					*tk = *loaded
				}
				return err
			},
			wantEntry: &task.Attempt{StageIndex: 0, Stage: "a", Run: 1, Attempt: 2, StartedAt: failedAt.Add(time.Second),
				EndedAt: failedAt.Add(time.Second), Outcome: task.OutcomeInterrupted, Class: stage.ClassCancelled},
		},
		{
			name: "stopped at a boundary: nothing",
			prepare: func(t *testing.T, tk *task.Task) {
				require.NoError(t, tk.Record(task.Attempt{StageIndex: 0, Stage: "a", Run: 1, Attempt: 1, StartedAt: t0,
					EndedAt: t0, Outcome: task.OutcomeSucceeded}))
				require.NoError(t, tk.CompleteStage(0, t0))
			},
			end: func(tk *task.Task) error {
				return tk.Interrupt(task.Failure{Stage: "b", Class: stage.ClassShutdown}, t0.Add(time.Minute))
			},
		},
		{
			name: "its last attempt ended the run: nothing",
			prepare: func(t *testing.T, tk *task.Task) {
				last := failedOnce
				last.Backoff = 0
				require.NoError(t, tk.Record(last))
			},
			end: func(tk *task.Task) error { return tk.Fail(lostOwner, failedAt) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tk := running(t)
			tt.prepare(t, tk)
			require.NoError(t, tt.end(tk))
			before := tk.Ledger()
			require.NoError(t, tk.Retry(0, failedAt.Add(time.Hour)))
			if tt.wantEntry == nil {
				assert.Equal(t, before, tk.Ledger())
				return
			}
			require.Len(t, tk.Ledger(), len(before)+1)
			got := lastEntry(t, tk)
			assert.NotEmpty(t, got.Error)
			got.Error = ""
			assert.Equal(t, *tt.wantEntry, got)
		})
	}
}

func TestRecordRefusesAnUnknownOutcome(t *testing.T) {
	t.Parallel()
	tk := running(t)
	for _, o := range []task.Outcome{"", "done"} {
		require.ErrorIs(t, tk.Record(task.Attempt{StageIndex: 0, Stage: "a", Run: 1, Attempt: 1, Outcome: o}), task.ErrInvalid)
	}
	assert.Zero(t, tk.LedgerLen())
}

func TestLoadRefusesABrokenLedger(t *testing.T) {
	t.Parallel()
	tk := running(t)
	require.NoError(t, tk.Record(failedOnce))
	require.NoError(t, tk.InterruptStage(lostOwner, failedAt.Add(time.Minute)))
	require.NoError(t, tk.Retry(0, failedAt.Add(time.Hour)))
	require.NoError(t, tk.Start(2, failedAt.Add(time.Hour)))
	require.NoError(t, tk.Record(task.Attempt{StageIndex: 0, Stage: "a", Run: 2, Attempt: 1, StartedAt: failedAt.Add(time.Hour),
		EndedAt: failedAt.Add(time.Hour), Outcome: task.OutcomeSucceeded}))
	base := tk.State()
	_, err := task.Load(base)
	require.NoError(t, err, "the base state, with an interrupted attempt, loads")

	tests := []struct {
		name   string
		mutate func(l []task.Attempt)
	}{
		{"no outcome", func(l []task.Attempt) { l[1].Outcome = "" }},
		{"unknown outcome", func(l []task.Attempt) { l[1].Outcome = "lost" }},
		{"stage index negative", func(l []task.Attempt) { l[0].StageIndex = -1 }},
		{"stage index past the stages", func(l []task.Attempt) { l[0].StageIndex = 2 }},
		{"run 0", func(l []task.Attempt) { l[0].Run = 0 }},
		{"stage attempt 0", func(l []task.Attempt) { l[1].Attempt = 0 }},
		{"runs out of order", func(l []task.Attempt) { l[0].Run = 2 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := tk.State() // a fresh copy of the ledger
			tt.mutate(s.Ledger)
			got, err := task.Load(s)
			require.ErrorIs(t, err, task.ErrInvalid)
			assert.Nil(t, got)
		})
	}
}
