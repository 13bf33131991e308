package repotest

import (
	"encoding/json"
	"testing"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// undoStages is stages() with an undo on the first stage (which reads its stage's output).
func undoStages() []stage.Spec {
	st := stages()
	st[0].Undo = &stage.Spec{Name: "build", Kind: "http", Params: map[string]any{"url": `https://x.example/undo/{{index .Outputs "build" "stage"}}`},
		Retry: stage.Policy{MaxAttempts: 2, InitialBackoff: 1e9, MaxBackoff: 2e9, Multiplier: 2, Jitter: stage.JitterNone}}
	return st
}

// testRollbackIsKept: a plan's undo specs and onFailure, and a task's rollback (its
// direction, its undo attempts, its checkpoint taken back one stage at a time, ROLLED_BACK)
// read back as written.
func testRollbackIsKept(t *testing.T, s Store) {
	ctx := t.Context()
	tk, err := task.New(ulid.Make().String(), "tenant-rb", nil, undoStages(), at(0))
	require.NoError(t, err)
	p, err := plan.New(plan.Draft{ID: tk.PlanID(), Name: "rb", Stages: undoStages(), TaskIDs: []string{tk.ID()},
		OnFailure: plan.OnFailureRollback}, at(0))
	require.NoError(t, err)
	require.NoError(t, s.Plans.Create(ctx, p))
	require.NoError(t, s.Tasks.Create(ctx, []*task.Task{tk}))
	gotPlan, err := s.Plans.Plan(ctx, p.ID())
	require.NoError(t, err)
	requireSamePlan(t, p, gotPlan)
	assert.Equal(t, plan.OnFailureRollback, gotPlan.OnFailure())
	require.NotNil(t, gotPlan.Stages()[0].Undo)
	assert.Equal(t, "http", gotPlan.Stages()[0].Undo.Kind)

	run, epoch := startRun(t, s, tk.ID(), at(1))
	cp := checkpoint.New(tk.ID())
	completeStage(t, run, cp, 0, epoch, at(2))
	require.NoError(t, s.Tasks.Save(ctx, run, cp))
	require.NoError(t, run.Record(task.Attempt{StageIndex: 1, Stage: "deploy", Run: 1, Attempt: 1, StartedAt: at(3), EndedAt: at(4),
		Outcome: task.OutcomeFailed, Class: stage.ClassPermanent, Error: "500"}))
	require.NoError(t, run.TurnBack(&task.Failure{Stage: "deploy", Attempt: 1, Class: stage.ClassPermanent, Message: "500"}, at(4)))
	require.NoError(t, s.Tasks.Save(ctx, run, nil))
	turned, err := s.Tasks.Task(ctx, tk.ID())
	require.NoError(t, err)
	requireSameTask(t, run, turned)
	assert.True(t, turned.RollingBack())

	require.NoError(t, run.Record(task.Attempt{StageIndex: 0, Stage: "build", Run: 2, Attempt: 1, StartedAt: at(5), EndedAt: at(6),
		Outcome: task.OutcomeSucceeded, Undo: true}))
	require.NoError(t, cp.Undo(0, "build", epoch, at(6)))
	require.NoError(t, run.UndoStage(0, at(6)))
	require.NoError(t, run.RolledBack(at(6)))
	require.NoError(t, s.Tasks.Save(ctx, run, cp))

	got, err := s.Tasks.Task(ctx, tk.ID())
	require.NoError(t, err)
	requireSameTask(t, run, got)
	assert.Equal(t, task.RolledBack, got.Status())
	last := got.Ledger()[got.LedgerLen()-1]
	assert.True(t, last.Undo, "the undo's attempt is told apart from the stage's")
	assert.False(t, got.Ledger()[0].Undo)
	gotCP, err := s.Checkpoints.Checkpoint(ctx, tk.ID())
	require.NoError(t, err)
	assert.Equal(t, 0, gotCP.Next(), "the undone stage is off the checkpoint")
	b, err := json.Marshal(gotCP.State())
	require.NoError(t, err)
	assert.NotContains(t, string(b), `"index":0`, "its output went with it")
}
