package task_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

func TestAwaitRecordsWhyAndWhere(t *testing.T) {
	t.Parallel()
	tk := inStatus(t, task.Waiting)
	w := tk.Wait()
	require.NotNil(t, w)
	assert.Equal(t, task.Wait{StageIndex: 1, Stage: tk.Stages()[1].Name, Reason: "approval",
		Message: "check the dashboards", Since: w.Since}, *w)
	assert.False(t, w.Since.IsZero())
	assert.Nil(t, tk.Decision(), "no decision yet")
	w.Reason = "mutated"
	assert.Equal(t, "approval", tk.Wait().Reason, "Wait returns a copy")
}

func TestDecisionCountsForItsStageAndRunOnly(t *testing.T) {
	t.Parallel()
	tk := inStatus(t, task.Waiting)
	now := t0.Add(time.Hour)
	require.NoError(t, tk.Decide(stage.Decision{Approved: false, Comment: "error rate up", DecidedAt: now}, now))
	require.Equal(t, task.Pending, tk.Status())
	assert.Nil(t, tk.Wait(), "only a WAITING task has a wait")

	d := tk.Decision()
	require.NotNil(t, d, "the next run of the same stage sees the decision")
	assert.Equal(t, stage.Decision{Approved: false, Comment: "error rate up", DecidedAt: now}, *d)

	loaded, err := task.Load(tk.State())
	require.NoError(t, err)
	require.NotNil(t, loaded.Decision(), "the decision is persisted")

	// The run fails at the gate (the rejection); a retry is a new run: the decision is spent.
	require.NoError(t, tk.Start(tk.Fence()+1, now))
	require.NoError(t, tk.Fail(task.Failure{Stage: "b", Class: stage.ClassPermanent, Message: "rejected"}, now))
	require.NoError(t, tk.Retry(1, now))
	assert.Nil(t, tk.Decision(), "a retry asks again")
	require.NotNil(t, tk.Verdict(), "the last verdict stays visible")
	assert.Equal(t, 1, tk.Verdict().Run)
}

func TestLoadRefusesAWaitThatDoesNotFit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		state func() task.State
	}{
		{"WAITING without a wait", func() task.State {
			s := inStatus(t, task.Waiting).State()
			s.Wait = nil
			return s
		}},
		{"a wait on a RUNNING task", func() task.State {
			s := inStatus(t, task.Running).State()
			s.Wait = &task.Wait{Stage: "a", Reason: "approval"}
			return s
		}},
		{"a wait at another stage", func() task.State {
			s := inStatus(t, task.Waiting).State()
			s.Wait.StageIndex = 0
			return s
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := task.Load(tt.state())
			require.ErrorIs(t, err, task.ErrInvalid)
		})
	}
}

// A decision on a task that is not WAITING is refused, saying that only a task waiting at a
// gate can be decided and what to do with this one.
func TestDecideOnATaskNotAtItsGateSaysWhy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status task.Status
		want   string
	}{
		{task.Pending, "has not reached its gate yet: wait until it does (its status then reads WAITING)"},
		{task.Running, "has not reached its gate yet: wait until it does (its status then reads WAITING)"},
		{task.Paused, "is stopped: resume or retry it"},
		{task.Completed, "has ended and waits at no gate"},
	}
	for _, tt := range tests {
		t.Run(string(tt.status), func(t *testing.T) {
			t.Parallel()
			tk := inStatus(t, tt.status)
			err := tk.Decide(stage.Decision{Approved: true, DecidedAt: t0}, t0)
			require.ErrorIs(t, err, task.ErrInvalidTransition)
			assert.Contains(t, err.Error(), "cannot decide on a "+string(tt.status)+" task: only a task WAITING at a gate (an approval stage) can be approved or rejected")
			assert.Contains(t, err.Error(), tt.want)
			assert.Equal(t, tt.status, tk.Status(), "nothing changed")
		})
	}
}
