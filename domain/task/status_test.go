package task_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/task"
)

// declaredStatuses parses status.go and returns the values of its constants of type Status,
// so that a status added there without an entry in Statuses (and so in the rules) fails.
func declaredStatuses(t *testing.T) []task.Status {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "status.go", nil, 0)
	require.NoError(t, err)
	var out []task.Status
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			v := spec.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Status" {
				continue
			}
			lit, ok := v.Values[0].(*ast.BasicLit)
			require.True(t, ok, "status %s is not a string literal", v.Names[0])
			s, err := strconv.Unquote(lit.Value)
			require.NoError(t, err)
			out = append(out, task.Status(s))
		}
	}
	return out
}

// TestEveryStatusHasItsRules fails when a status is declared without being listed in
// Statuses: a status the rules do not know is not Valid, and every rule is false for it
// (a new status would otherwise silently count as not settled, not retryable...).
func TestEveryStatusHasItsRules(t *testing.T) {
	t.Parallel()
	declared := declaredStatuses(t)
	require.NotEmpty(t, declared)
	assert.ElementsMatch(t, declared, task.Statuses)
	for _, s := range declared {
		assert.True(t, s.Valid(), "status %s has no rules", s)
	}
}

func TestStatusRules(t *testing.T) {
	t.Parallel()
	type rules struct{ settled, atRest, retryable, cancellable, undoable, failure, skippable bool }
	want := map[task.Status]rules{
		task.Pending:        {cancellable: true, skippable: true},
		task.Running:        {cancellable: true, undoable: true},
		task.Waiting:        {atRest: true, cancellable: true, skippable: true},
		task.Paused:         {atRest: true, retryable: true, cancellable: true, undoable: true, skippable: true},
		task.Completed:      {settled: true, atRest: true, undoable: true},
		task.Failed:         {settled: true, atRest: true, retryable: true, undoable: true, failure: true, skippable: true},
		task.Cancelled:      {settled: true, atRest: true, retryable: true, undoable: true, skippable: true},
		task.Interrupted:    {settled: true, atRest: true, retryable: true, cancellable: true, undoable: true, skippable: true},
		task.RolledBack:     {settled: true, atRest: true, retryable: true, failure: true},
		task.RollbackFailed: {settled: true, atRest: true, retryable: true, undoable: true, failure: true},
		task.Skipped:        {settled: true, atRest: true, retryable: true, undoable: true},
	}
	require.Len(t, task.Statuses, len(want))
	for _, s := range task.Statuses {
		t.Run(string(s), func(t *testing.T) {
			t.Parallel()
			w, ok := want[s]
			require.True(t, ok, "no expectation for %s", s)
			assert.Equal(t, w, rules{s.Settled(), s.AtRest(), s.Retryable(), s.Cancellable(), s.Undoable(), s.Failure(), s.Skippable()})
			if s.Terminal() {
				assert.True(t, s.Settled(), "a terminal status is settled")
				assert.True(t, s.AtRest(), "a terminal status is at rest")
			}
		})
	}
	assert.Equal(t, []task.Status{task.Paused, task.Failed, task.Cancelled, task.Interrupted, task.RolledBack, task.RollbackFailed, task.Skipped}, task.RetryableStatuses())
	assert.Equal(t, []task.Status{task.Running, task.Paused, task.Completed, task.Failed, task.Cancelled, task.Interrupted, task.RollbackFailed, task.Skipped}, task.UndoableStatuses())
	assert.Equal(t, []task.Status{task.Pending, task.Waiting, task.Paused, task.Failed, task.Cancelled, task.Interrupted}, task.SkippableStatuses())
	assert.Equal(t, []task.Status{task.Pending, task.Running, task.Waiting, task.Paused, task.Interrupted}, task.CancellableStatuses())
	for _, bogus := range []task.Status{"", "BOGUS"} {
		assert.False(t, bogus.Settled() || bogus.AtRest() || bogus.Retryable() || bogus.Cancellable() || bogus.Terminal())
	}
}

// TestTransitionsFollowTheRules checks that Retry and Cancel accept exactly the statuses
// Retryable and Cancellable report, so the API and the console, which read the rules, offer
// what the aggregate allows.
func TestTransitionsFollowTheRules(t *testing.T) {
	t.Parallel()
	now := t0.Add(time.Hour)
	for _, s := range task.Statuses {
		t.Run(string(s), func(t *testing.T) {
			t.Parallel()
			err := inStatus(t, s).Retry(0, now)
			if s.Retryable() {
				assert.NoError(t, err)
			} else {
				require.ErrorIs(t, err, task.ErrInvalidTransition)
			}
			tk := inStatus(t, s)
			err = tk.Rollback(now)
			if s.Undoable() && (tk.CurrentStage() > 0 || tk.RollingBack()) {
				assert.NoError(t, err)
			} else { // not undoable, or nothing to undo: the fixture completed no stage
				require.ErrorIs(t, err, task.ErrInvalidTransition)
			}
			err = inStatus(t, s).Cancel(nil, now)
			if s.Cancellable() {
				assert.NoError(t, err)
			} else {
				require.ErrorIs(t, err, task.ErrInvalidTransition)
			}
			tk = inStatus(t, s)
			last := tk.LastError()
			err = tk.Skip(now)
			if s.Skippable() {
				require.NoError(t, err)
				assert.Equal(t, task.Skipped, tk.Status())
				assert.Equal(t, last, tk.LastError(), "what made the operator skip it stays")
				assert.Nil(t, tk.Wait(), "a gate's wait ends with the skip")
				assert.Empty(t, task.RowOf(tk).Class, "a skipped task counts in no failure class")
			} else {
				require.ErrorIs(t, err, task.ErrInvalidTransition)
				assert.Equal(t, s, tk.Status())
			}
		})
	}
}

// TestPauseOrigin: a pause asked by the task's plan is told apart from one asked for its
// tenant (PausedByPlan), through the pause and the persisted state; a tenant's own request
// wins over the plan's, and a resume forgets both.
func TestPauseOrigin(t *testing.T) {
	t.Parallel()
	now := t0.Add(time.Hour)
	tests := []struct {
		name   string
		ask    func(tk *task.Task) error
		byPlan bool
	}{
		{name: "the plan's", ask: func(tk *task.Task) error { return tk.RequestPlanPause(now) }, byPlan: true},
		{name: "the tenant's", ask: func(tk *task.Task) error { return tk.RequestPause(now) }},
		{name: "the tenant's, then the plan's", ask: func(tk *task.Task) error {
			if err := tk.RequestPause(now); err != nil {
				return err
			}
			return tk.RequestPlanPause(now)
		}},
		{name: "the plan's, then the tenant's", ask: func(tk *task.Task) error {
			if err := tk.RequestPlanPause(now); err != nil {
				return err
			}
			return tk.RequestPause(now)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tk := inStatus(t, task.Running)
			require.NoError(t, tc.ask(tk))
			assert.Equal(t, tc.byPlan, tk.PausedByPlan(), "asked")
			require.NoError(t, tk.Pause(now))
			assert.Equal(t, tc.byPlan, tk.PausedByPlan(), "honoured")
			loaded, err := task.Load(tk.State())
			require.NoError(t, err)
			assert.Equal(t, tc.byPlan, loaded.PausedByPlan(), "persisted")
			require.NoError(t, tk.Resume(now))
			assert.False(t, tk.PausedByPlan(), "resumed")
		})
	}
}
