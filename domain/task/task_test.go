package task_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

var t0 = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

func specs(names ...string) []stage.Spec {
	out := make([]stage.Spec, len(names))
	for i, n := range names {
		out[i] = stage.Spec{Name: n, Kind: "sleep"}
	}
	return out
}

// newTask returns a PENDING task with stages "a" and "b".
func newTask(t *testing.T) *task.Task {
	t.Helper()
	tk, err := task.New(ulid.Make().String(), "tenant-1", map[string]any{"region": "eu"}, specs("a", "b"), t0)
	require.NoError(t, err)
	return tk
}

// fixture names a way to build a task: a status plus the details that change what an action
// does (a pending pause, every stage done).
type fixture struct {
	name   string
	status task.Status
	build  func(t *testing.T) *task.Task
}

// inStatus drives a new task through legal transitions until it is in status s.
func inStatus(t *testing.T, s task.Status) *task.Task {
	t.Helper()
	tk := newTask(t)
	now := t0
	step := func(err error) {
		t.Helper()
		now = now.Add(time.Second)
		require.NoError(t, err)
	}
	start := func() { step(tk.Start(1, now)) }
	switch s {
	case task.Pending:
	case task.Running:
		start()
	case task.Paused:
		start()
		step(tk.Pause(now))
	case task.Completed:
		start()
		step(tk.CompleteStage(0, now))
		step(tk.CompleteStage(1, now))
		step(tk.Complete(now))
	case task.Failed:
		start()
		step(tk.Fail(task.Failure{Stage: "a", Attempt: 3, Class: stage.ClassPermanent, Message: "boom"}, now))
	case task.Cancelled:
		step(tk.Cancel(nil, now))
	case task.Waiting:
		start()
		step(tk.CompleteStage(0, now))
		step(tk.Await("approval", "check the dashboards", now))
	case task.Interrupted:
		start()
		step(tk.Interrupt(task.Failure{Stage: "a", Class: stage.ClassLeaseLost, Message: "lease lost"}, now))
	case task.RolledBack:
		start()
		step(tk.CompleteStage(0, now))
		step(tk.TurnBack(&task.Failure{Stage: "b", Attempt: 1, Class: stage.ClassPermanent, Message: "boom"}, now))
		step(tk.UndoStage(0, now))
		step(tk.RolledBack(now))
	case task.RollbackFailed:
		start()
		step(tk.CompleteStage(0, now))
		step(tk.TurnBack(&task.Failure{Stage: "b", Attempt: 1, Class: stage.ClassPermanent, Message: "boom"}, now))
		step(tk.Fail(task.Failure{Stage: "a", Attempt: 1, Class: stage.ClassPermanent, Message: "undo failed"}, now))
	case task.Skipped:
		start()
		step(tk.Fail(task.Failure{Stage: "a", Attempt: 1, Class: stage.ClassPermanent, Message: "boom"}, now))
		step(tk.Skip(now))
	default:
		t.Fatalf("no fixture for status %q", s)
	}
	require.Equal(t, s, tk.Status())
	return tk
}

func fixtures() []fixture {
	var out []fixture
	for _, s := range task.Statuses {
		out = append(out, fixture{name: string(s), status: s, build: func(t *testing.T) *task.Task {
			t.Helper()
			return inStatus(t, s)
		}})
	}
	return append(out,
		fixture{name: "PENDING+pauseRequested", status: task.Pending, build: func(t *testing.T) *task.Task {
			t.Helper()
			tk := inStatus(t, task.Pending)
			require.NoError(t, tk.RequestPause(t0))
			return tk
		}},
		fixture{name: "RUNNING+pauseRequested", status: task.Running, build: func(t *testing.T) *task.Task {
			t.Helper()
			tk := inStatus(t, task.Running)
			require.NoError(t, tk.RequestPause(t0))
			return tk
		}},
		fixture{name: "RUNNING+allStagesDone", status: task.Running, build: func(t *testing.T) *task.Task {
			t.Helper()
			tk := inStatus(t, task.Running)
			require.NoError(t, tk.CompleteStage(0, t0))
			require.NoError(t, tk.CompleteStage(1, t0))
			return tk
		}},
		fixture{name: "RUNNING+rollingBack", status: task.Running, build: func(t *testing.T) *task.Task {
			t.Helper()
			tk := inStatus(t, task.Running)
			require.NoError(t, tk.CompleteStage(0, t0))
			require.NoError(t, tk.TurnBack(&task.Failure{Stage: "b", Class: stage.ClassPermanent, Message: "boom"}, t0))
			return tk
		}},
	)
}

type action struct {
	name string
	do   func(tk *task.Task, now time.Time) error
}

var actions = []action{
	{"Start", func(tk *task.Task, now time.Time) error { return tk.Start(tk.Fence()+1, now) }},
	{"CompleteStage", func(tk *task.Task, now time.Time) error { return tk.CompleteStage(tk.CurrentStage(), now) }},
	{"Complete", func(tk *task.Task, now time.Time) error { return tk.Complete(now) }},
	{"Fail", func(tk *task.Task, now time.Time) error {
		return tk.Fail(task.Failure{Stage: "a", Class: stage.ClassPermanent, Message: "x"}, now)
	}},
	{"Interrupt", func(tk *task.Task, now time.Time) error {
		return tk.Interrupt(task.Failure{Stage: "a", Class: stage.ClassLeaseLost, Message: "x"}, now)
	}},
	{"Pause", func(tk *task.Task, now time.Time) error { return tk.Pause(now) }},
	{"HandBack", func(tk *task.Task, now time.Time) error { return tk.HandBack(now) }},
	{"RequestPause", func(tk *task.Task, now time.Time) error { return tk.RequestPause(now) }},
	{"Resume", func(tk *task.Task, now time.Time) error { return tk.Resume(now) }},
	{"Cancel", func(tk *task.Task, now time.Time) error { return tk.Cancel(nil, now) }},
	{"Skip", func(tk *task.Task, now time.Time) error { return tk.Skip(now) }},
	{"Retry", func(tk *task.Task, now time.Time) error { return tk.Retry(0, now) }},
	{"Await", func(tk *task.Task, now time.Time) error { return tk.Await("approval", "", now) }},
	{"Decide", func(tk *task.Task, now time.Time) error {
		return tk.Decide(stage.Decision{Approved: true, DecidedAt: now}, now)
	}},
	{"TurnBack", func(tk *task.Task, now time.Time) error {
		return tk.TurnBack(&task.Failure{Stage: "a", Class: stage.ClassPermanent, Message: "x"}, now)
	}},
	{"Rollback", func(tk *task.Task, now time.Time) error { return tk.Rollback(now) }},
	{"UndoStage", func(tk *task.Task, now time.Time) error { return tk.UndoStage(tk.CurrentStage()-1, now) }},
	{"RolledBack", func(tk *task.Task, now time.Time) error { return tk.RolledBack(now) }},
	{"Record", func(tk *task.Task, now time.Time) error {
		return tk.Record(task.Attempt{Stage: "a", Run: tk.Attempt(), Attempt: 1, StartedAt: now, EndedAt: now, Outcome: task.OutcomeSucceeded})
	}},
}

// Expected outcomes of the transition matrix.
var (
	invalid    = outcome{err: task.ErrInvalidTransition}
	outOfOrder = outcome{err: task.ErrStageOutOfOrder}
	// nothing: a rollback of a task that completed no stage
	nothing = invalid
)

type outcome struct {
	status task.Status // when err is nil
	err    error
}

func to(s task.Status) outcome { return outcome{status: s} }

// matrix is the doc.go state machine: every (fixture, action) pair not listed is invalid.
var matrix = map[string]map[string]outcome{
	"PENDING": {
		"Start": to(task.Running), "RequestPause": to(task.Pending), "Cancel": to(task.Cancelled),
		"Interrupt": to(task.Interrupted), "Skip": to(task.Skipped),
	},
	"PENDING+pauseRequested": {
		"Start": to(task.Running), "RequestPause": to(task.Pending), "Resume": to(task.Pending),
		"Cancel": to(task.Cancelled), "Interrupt": to(task.Interrupted), "Skip": to(task.Skipped),
	},
	"RUNNING": {
		"CompleteStage": to(task.Running), "Complete": outOfOrder, "Fail": to(task.Failed), "HandBack": to(task.Pending),
		"Interrupt": to(task.Interrupted), "Pause": to(task.Paused), "RequestPause": to(task.Running),
		"Cancel": to(task.Cancelled), "Record": to(task.Running), "Await": to(task.Waiting), "TurnBack": to(task.Running),
		"Rollback": nothing,
	},
	"RUNNING+pauseRequested": {
		"CompleteStage": to(task.Running), "Complete": outOfOrder, "Fail": to(task.Failed), "HandBack": to(task.Pending),
		"Interrupt": to(task.Interrupted), "Pause": to(task.Paused), "RequestPause": to(task.Running),
		"Resume": to(task.Running), "Cancel": to(task.Cancelled), "Record": to(task.Running),
		"Await": to(task.Waiting), "TurnBack": to(task.Running), "Rollback": nothing,
	},
	"RUNNING+allStagesDone": {
		"CompleteStage": outOfOrder, "Complete": to(task.Completed), "Fail": to(task.Failed), "HandBack": to(task.Pending),
		"Interrupt": to(task.Interrupted), "Pause": to(task.Paused), "RequestPause": to(task.Running),
		"Cancel": to(task.Cancelled), "Record": to(task.Running), "Await": outOfOrder, "TurnBack": to(task.Running),
		"Rollback": to(task.Running), // requested: its run turns back
	},
	"RUNNING+rollingBack": {
		"Fail": to(task.RollbackFailed), "HandBack": to(task.Pending), "UndoStage": to(task.Running), "RolledBack": outOfOrder,
		"Interrupt": to(task.Interrupted), "Pause": to(task.Paused), "RequestPause": to(task.Running),
		"Cancel": to(task.Cancelled), "Record": to(task.Running), "Await": to(task.Waiting),
	},
	"WAITING": {"Cancel": to(task.Cancelled), "Decide": to(task.Pending), "Skip": to(task.Skipped)},
	"PAUSED": {
		"RequestPause": to(task.Paused), "Resume": to(task.Pending), "Cancel": to(task.Cancelled),
		"Retry": to(task.Pending), "Rollback": nothing, "Skip": to(task.Skipped),
	},
	"COMPLETED":       {"Rollback": to(task.Pending)},
	"FAILED":          {"Retry": to(task.Pending), "Rollback": nothing, "Skip": to(task.Skipped)},
	"CANCELLED":       {"Retry": to(task.Pending), "Rollback": nothing, "Skip": to(task.Skipped)},
	"INTERRUPTED":     {"Cancel": to(task.Cancelled), "Retry": to(task.Pending), "Rollback": nothing, "Skip": to(task.Skipped)},
	"ROLLED_BACK":     {"Retry": to(task.Pending)},
	"ROLLBACK_FAILED": {"Retry": to(task.Pending), "Rollback": to(task.Pending)},
	"SKIPPED":         {"Retry": to(task.Pending), "Rollback": nothing},
}

func TestTransitionMatrix(t *testing.T) {
	t.Parallel()
	fxs := fixtures()
	require.Len(t, matrix, len(fxs), "the matrix must list every fixture")
	for _, fx := range fxs {
		row, ok := matrix[fx.name]
		require.True(t, ok, "matrix has no row for %s", fx.name)
		for _, a := range actions {
			want, listed := row[a.name]
			if !listed {
				want = invalid
			}
			t.Run(fx.name+"/"+a.name, func(t *testing.T) {
				t.Parallel()
				tk := fx.build(t)
				before := tk.State()
				now := t0.Add(time.Hour)

				var err error
				require.NotPanics(t, func() { err = a.do(tk, now) })

				if want.err != nil {
					require.ErrorIs(t, err, want.err)
					assert.Equal(t, before, tk.State(), "a refused action must not change the task")
					if errors.Is(want.err, task.ErrInvalidTransition) {
						var te *task.TransitionError
						require.ErrorAs(t, err, &te)
						assert.Equal(t, fx.status, te.From)
						assert.NotEmpty(t, te.Action)
					}
					return
				}
				require.NoError(t, err)
				assert.Equal(t, want.status, tk.Status())
				assert.Equal(t, want.status.Terminal(), !tk.FinishedAt().IsZero(),
					"FinishedAt is set exactly when the task is terminal")
				_, err = task.Load(tk.State())
				require.NoError(t, err, "a legal transition must leave a loadable task")
			})
		}
	}
}

func TestTransitionError(t *testing.T) {
	t.Parallel()
	tk := inStatus(t, task.Completed)
	err := tk.Start(5, t0)
	require.ErrorIs(t, err, task.ErrInvalidTransition)
	var te *task.TransitionError
	require.True(t, errors.As(err, &te))
	assert.Equal(t, task.Completed, te.From)
	assert.Equal(t, "start", te.Action)
	assert.NotErrorIs(t, err, task.ErrStageOutOfOrder)

	wrapped := fmt.Errorf("ctx: %w", err)
	require.ErrorIs(t, wrapped, task.ErrInvalidTransition)
	require.ErrorAs(t, wrapped, &te)
}

func TestStatusTerminal(t *testing.T) {
	t.Parallel()
	want := map[task.Status]bool{
		task.Pending: false, task.Running: false, task.Waiting: false, task.Paused: false, task.Interrupted: false,
		task.Completed: true, task.Failed: true, task.Cancelled: true, task.RolledBack: true, task.RollbackFailed: true,
		task.Skipped: true,
	}
	require.Len(t, task.Statuses, len(want))
	for _, s := range task.Statuses {
		t.Run(string(s), func(t *testing.T) {
			t.Parallel()
			assert.True(t, s.Valid())
			assert.Equal(t, want[s], s.Terminal())
		})
	}
	assert.False(t, task.Status("BOGUS").Valid())
	assert.False(t, task.Status("").Valid())
}

func TestAttemptGrowsOnRetryOnly(t *testing.T) {
	t.Parallel()
	tk := inStatus(t, task.Running)
	require.Equal(t, 1, tk.Attempt())

	require.NoError(t, tk.Pause(t0))
	require.NoError(t, tk.Resume(t0))
	assert.Equal(t, 1, tk.Attempt(), "resume is not a retry")
	assert.Equal(t, task.Pending, tk.Status())

	require.NoError(t, tk.RequestPause(t0))
	require.NoError(t, tk.Resume(t0))
	assert.Equal(t, 1, tk.Attempt(), "withdrawing a pause is not a retry")
	assert.False(t, tk.PauseRequested())

	require.NoError(t, tk.Start(2, t0))
	require.NoError(t, tk.Fail(task.Failure{Class: stage.ClassPermanent}, t0))
	require.NoError(t, tk.Retry(0, t0))
	assert.Equal(t, 2, tk.Attempt())

	require.NoError(t, tk.Start(3, t0))
	require.NoError(t, tk.Interrupt(task.Failure{Class: stage.ClassLeaseLost}, t0))
	require.NoError(t, tk.Retry(0, t0))
	assert.Equal(t, 3, tk.Attempt())

	err := tk.Retry(0, t0)
	require.ErrorIs(t, err, task.ErrInvalidTransition, "a PENDING task cannot be retried")
	assert.Equal(t, 3, tk.Attempt())
}

func TestRetrySetsCurrentStage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		from    int
		wantErr error
	}{
		{"from the start", 0, nil},
		{"from the second stage", 1, nil},
		{"past the last stage", 2, nil},
		{"negative", -1, task.ErrStageOutOfOrder},
		{"beyond the stages", 3, task.ErrStageOutOfOrder},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tk := inStatus(t, task.Running)
			require.NoError(t, tk.CompleteStage(0, t0))
			require.NoError(t, tk.Fail(task.Failure{Stage: "b", Class: stage.ClassPermanent, Message: "x"}, t0))
			require.NotNil(t, tk.LastError())
			before := tk.State()

			err := tk.Retry(tt.from, t0.Add(time.Minute))
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Equal(t, before, tk.State())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.from, tk.CurrentStage())
			assert.Equal(t, task.Pending, tk.Status())
			assert.Equal(t, 2, tk.Attempt())
			assert.Nil(t, tk.LastError())
			assert.True(t, tk.FinishedAt().IsZero())
			assert.Equal(t, t0.Add(time.Minute), tk.UpdatedAt())
		})
	}
}

func TestStagesCompleteInOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		done  int // stages completed before the call
		index int
		want  error
	}{
		{"first", 0, 0, nil},
		{"second after first", 1, 1, nil},
		{"skip a stage", 0, 1, task.ErrStageOutOfOrder},
		{"repeat a stage", 1, 0, task.ErrStageOutOfOrder},
		{"negative", 0, -1, task.ErrStageOutOfOrder},
		{"past the last", 2, 2, task.ErrStageOutOfOrder},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tk := inStatus(t, task.Running)
			for i := range tt.done {
				require.NoError(t, tk.CompleteStage(i, t0))
			}
			err := tk.CompleteStage(tt.index, t0)
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
				assert.Equal(t, tt.done, tk.CurrentStage())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.done+1, tk.CurrentStage())
		})
	}
}

func TestCompleteBeforeLastStage(t *testing.T) {
	t.Parallel()
	tk := inStatus(t, task.Running)
	require.ErrorIs(t, tk.Complete(t0), task.ErrStageOutOfOrder)
	require.NoError(t, tk.CompleteStage(0, t0))
	require.ErrorIs(t, tk.Complete(t0), task.ErrStageOutOfOrder)
	assert.Equal(t, task.Running, tk.Status())
	require.NoError(t, tk.CompleteStage(1, t0))
	require.NoError(t, tk.Complete(t0))
	assert.Equal(t, task.Completed, tk.Status())
}

func TestStartFencing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		fence     uint64 // the fence of the previous run
		epoch     uint64
		wantErr   error
		wantFence uint64
	}{
		{"first run", 0, 1, nil, 1},
		{"same epoch", 3, 3, nil, 3},
		{"newer epoch", 3, 7, nil, 7},
		{"older epoch", 3, 2, task.ErrFenced, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tk := newTask(t)
			if tt.fence > 0 {
				require.NoError(t, tk.Start(tt.fence, t0))
				require.NoError(t, tk.Interrupt(task.Failure{Class: stage.ClassLeaseLost}, t0))
				require.NoError(t, tk.Retry(0, t0))
			}
			before := tk.State()
			err := tk.Start(tt.epoch, t0.Add(time.Minute))
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Equal(t, before, tk.State())
			} else {
				require.NoError(t, err)
				assert.Equal(t, task.Running, tk.Status())
				assert.Equal(t, t0.Add(time.Minute), tk.StartedAt())
			}
			assert.Equal(t, tt.wantFence, tk.Fence())
		})
	}
}

func TestTerminalSetsFinishedAt(t *testing.T) {
	t.Parallel()
	end := t0.Add(time.Hour)
	tests := []struct {
		name string
		from task.Status
		do   func(tk *task.Task) error
		want task.Status
	}{
		{"complete", task.Running, func(tk *task.Task) error {
			if err := tk.CompleteStage(0, end); err != nil {
				return err
			}
			if err := tk.CompleteStage(1, end); err != nil {
				return err
			}
			return tk.Complete(end)
		}, task.Completed},
		{"fail", task.Running, func(tk *task.Task) error { return tk.Fail(task.Failure{Class: stage.ClassPermanent}, end) }, task.Failed},
		{"cancel pending", task.Pending, func(tk *task.Task) error { return tk.Cancel(nil, end) }, task.Cancelled},
		{"cancel running", task.Running, func(tk *task.Task) error { return tk.Cancel(nil, end) }, task.Cancelled},
		{"cancel paused", task.Paused, func(tk *task.Task) error { return tk.Cancel(nil, end) }, task.Cancelled},
		{"cancel interrupted", task.Interrupted, func(tk *task.Task) error { return tk.Cancel(nil, end) }, task.Cancelled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tk := inStatus(t, tt.from)
			require.NoError(t, tt.do(tk))
			assert.Equal(t, tt.want, tk.Status())
			assert.Equal(t, end, tk.FinishedAt())
			assert.False(t, tk.PauseRequested())
		})
	}

	t.Run("interrupt is not terminal", func(t *testing.T) {
		t.Parallel()
		tk := inStatus(t, task.Interrupted)
		assert.True(t, tk.FinishedAt().IsZero())
		require.NotNil(t, tk.LastError())
		assert.Equal(t, stage.ClassLeaseLost, tk.LastError().Class)
	})
}

func TestCancelReason(t *testing.T) {
	t.Parallel()
	t.Run("explicit reason", func(t *testing.T) {
		t.Parallel()
		tk := inStatus(t, task.Interrupted)
		reason := &task.Failure{Class: stage.ClassCancelled, Message: "abandoned"}
		require.NoError(t, tk.Cancel(reason, t0))
		assert.Equal(t, reason, tk.LastError())
	})
	t.Run("nil keeps the last error", func(t *testing.T) {
		t.Parallel()
		tk := inStatus(t, task.Interrupted)
		last := tk.LastError()
		require.NoError(t, tk.Cancel(nil, t0))
		assert.Equal(t, last, tk.LastError())
	})
}

func TestLedger(t *testing.T) {
	t.Parallel()
	tk := inStatus(t, task.Running)
	a := task.Attempt{StageIndex: 0, Stage: "a", Run: 1, Attempt: 1, StartedAt: t0, EndedAt: t0.Add(time.Second),
		Outcome: task.OutcomeFailed, Class: stage.ClassRetryable, Error: "503", Code: 503, Backoff: time.Second}
	require.NoError(t, tk.Record(a))
	assert.Equal(t, t0.Add(time.Second), tk.UpdatedAt())

	ledger := tk.Ledger()
	require.Equal(t, []task.Attempt{a}, ledger)
	ledger[0].Stage = "mutated"
	assert.Equal(t, "a", tk.Ledger()[0].Stage, "Ledger returns a copy")

	lastErr := &task.Failure{Stage: "a", Message: "x"}
	require.NoError(t, tk.Fail(*lastErr, t0))
	tk.LastError().Message = "mutated"
	assert.Equal(t, "x", tk.LastError().Message, "LastError returns a copy")

	require.ErrorIs(t, tk.Record(a), task.ErrInvalidTransition, "only a RUNNING task records attempts")
	assert.Len(t, tk.Ledger(), 1)
}

func TestNew(t *testing.T) {
	t.Parallel()
	planID := ulid.Make().String()
	tests := []struct {
		name    string
		planID  string
		tenant  string
		stages  []stage.Spec
		wantErr bool
	}{
		{"valid", planID, "tenant-1", specs("a"), false},
		{"dots and underscores", planID, "acme.eu_1", specs("a"), false},
		{"128 characters", planID, strings.Repeat("x", 128), specs("a"), false},
		{"129 characters", planID, strings.Repeat("x", 129), specs("a"), true},
		{"empty tenant", planID, "", specs("a"), true},
		{"brace", planID, "ten{ant}", specs("a"), true},
		{"colon", planID, "tenant:1", specs("a"), true},
		{"leading dash", planID, "-tenant", specs("a"), true},
		{"space", planID, "ten ant", specs("a"), true},
		{"no plan", "", "tenant-1", specs("a"), true},
		{"no stages", planID, "tenant-1", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tk, err := task.New(tt.planID, tt.tenant, nil, tt.stages, t0)
			if tt.wantErr {
				require.ErrorIs(t, err, task.ErrInvalid)
				assert.Nil(t, tk)
				return
			}
			require.NoError(t, err)
			_, err = ulid.ParseStrict(tk.ID())
			require.NoError(t, err)
			assert.Equal(t, task.Pending, tk.Status())
			assert.Equal(t, 1, tk.Attempt())
			assert.Equal(t, 0, tk.CurrentStage())
			assert.Equal(t, tt.tenant, tk.TenantID())
			assert.Equal(t, tt.planID, tk.PlanID())
			assert.Equal(t, t0, tk.CreatedAt())
			assert.True(t, tk.FinishedAt().IsZero())
			assert.Zero(t, tk.Fence())
		})
	}
}

func TestNewIDsAreUnique(t *testing.T) {
	t.Parallel()
	a, b := newTask(t), newTask(t)
	assert.NotEqual(t, a.ID(), b.ID())
}

func TestStateRoundTrip(t *testing.T) {
	t.Parallel()
	for _, fx := range fixtures() {
		t.Run(fx.name, func(t *testing.T) {
			t.Parallel()
			tk := fx.build(t)
			if tk.Status() == task.Running {
				require.NoError(t, tk.Record(task.Attempt{Stage: "a", Run: 1, Attempt: 1, EndedAt: t0, Outcome: task.OutcomeSucceeded}))
			}
			s := tk.State()
			loaded, err := task.Load(s)
			require.NoError(t, err)
			assert.Equal(t, s, loaded.State())
			assert.Equal(t, tk.ID(), loaded.ID())
			assert.Equal(t, tk.Status(), loaded.Status())
			assert.Equal(t, tk.PauseRequested(), loaded.PauseRequested())
			assert.Equal(t, tk.Ledger(), loaded.Ledger())
		})
	}
}

func TestStateCopiesLedgerAndLastError(t *testing.T) {
	t.Parallel()
	tk := inStatus(t, task.Running)
	require.NoError(t, tk.Record(task.Attempt{Stage: "a", Run: 1, Attempt: 1, Outcome: task.OutcomeFailed}))
	require.NoError(t, tk.Interrupt(task.Failure{Message: "lost"}, t0))

	s := tk.State()
	s.Ledger[0].Stage = "mutated"
	s.LastError.Message = "mutated"
	assert.Equal(t, "a", tk.Ledger()[0].Stage)
	assert.Equal(t, "lost", tk.LastError().Message)

	s = tk.State()
	loaded, err := task.Load(s)
	require.NoError(t, err)
	s.Ledger[0].Stage = "mutated"
	s.LastError.Message = "mutated"
	assert.Equal(t, "a", loaded.Ledger()[0].Stage, "Load copies the ledger")
	assert.Equal(t, "lost", loaded.LastError().Message, "Load copies the last error")
}

func TestLoadRefusesBrokenState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(s *task.State)
	}{
		{"bad ULID", func(s *task.State) { s.ID = "not-a-ulid" }},
		{"empty id", func(s *task.State) { s.ID = "" }},
		{"no plan", func(s *task.State) { s.PlanID = "" }},
		{"no tenant", func(s *task.State) { s.TenantID = "" }},
		{"unknown status", func(s *task.State) { s.Status = "DONE" }},
		{"empty status", func(s *task.State) { s.Status = "" }},
		{"no stages", func(s *task.State) { s.Stages = nil; s.CurrentStage = 0 }},
		{"current stage negative", func(s *task.State) { s.CurrentStage = -1 }},
		{"current stage past the end", func(s *task.State) { s.CurrentStage = len(s.Stages) + 1 }},
		{"completed before the last stage", func(s *task.State) { s.CurrentStage = len(s.Stages) - 1 }},
		{"attempt 0", func(s *task.State) { s.Attempt = 0 }},
		{"negative attempt", func(s *task.State) { s.Attempt = -2 }},
		{"terminal without finishedAt", func(s *task.State) { s.FinishedAt = time.Time{} }},
	}
	base := inStatus(t, task.Completed).State()
	_, err := task.Load(base)
	require.NoError(t, err, "the base state must be valid")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := base
			tt.mutate(&s)
			tk, err := task.Load(s)
			require.ErrorIs(t, err, task.ErrInvalid)
			assert.Nil(t, tk)
		})
	}

	for _, st := range []task.Status{task.Failed, task.Cancelled} {
		t.Run(string(st)+" without finishedAt", func(t *testing.T) {
			t.Parallel()
			s := inStatus(t, st).State()
			s.FinishedAt = time.Time{}
			_, err := task.Load(s)
			require.ErrorIs(t, err, task.ErrInvalid)
		})
	}
	t.Run("INTERRUPTED without finishedAt is fine", func(t *testing.T) {
		t.Parallel()
		s := inStatus(t, task.Interrupted).State()
		require.True(t, s.FinishedAt.IsZero())
		_, err := task.Load(s)
		require.NoError(t, err)
	})
}

func TestCloneIsIndependent(t *testing.T) {
	t.Parallel()
	attempt := func(stage string) task.Attempt {
		return task.Attempt{StageIndex: 0, Stage: stage, Run: 1, Attempt: 1, StartedAt: t0, EndedAt: t0, Outcome: task.OutcomeFailed}
	}
	orig := inStatus(t, task.Running)
	require.NoError(t, orig.Record(attempt("first")))
	c := orig.Clone()
	require.Equal(t, orig.State(), c.State())

	require.NoError(t, orig.Record(attempt("orig")))
	require.NoError(t, c.Record(attempt("clone")))
	require.Equal(t, "orig", orig.Ledger()[1].Stage, "the clone's append did not write into the original's ledger")
	require.Equal(t, "clone", c.Ledger()[1].Stage)

	require.NoError(t, c.Fail(task.Failure{Stage: "a", Message: "x"}, t0))
	require.Equal(t, task.Running, orig.Status(), "a transition of the clone left the original as it was")
	require.Nil(t, orig.LastError())
	again := c.Clone()
	require.NoError(t, c.Retry(0, t0))
	require.Equal(t, task.Failed, again.Status())
	require.Equal(t, "x", again.LastError().Message)
}

func TestHandBackKeepsProgressForTheNextRun(t *testing.T) {
	t.Parallel()
	tk := newTask(t)
	require.NoError(t, tk.StartOn(1, "exec-a", t0))
	require.NoError(t, tk.CompleteStage(0, t0.Add(time.Second)))
	require.NoError(t, tk.HandBack(t0.Add(2*time.Second)))
	assert.Equal(t, task.Pending, tk.Status())
	assert.Equal(t, 1, tk.CurrentStage(), "the next run continues at the stage after the last completed")
	assert.Equal(t, 1, tk.Attempt(), "a hand-back is not a retry")
	assert.Empty(t, tk.Executor(), "no executor runs it while it is queued")
	require.NoError(t, tk.StartOn(2, "exec-b", t0.Add(3*time.Second)))
	assert.Equal(t, "exec-b", tk.Executor())
}
