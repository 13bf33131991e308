package repotest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// Index is a store's index of each plan's tasks (app.PlanIndex; repeated here so the suite
// does not depend on the application layer): kept with every write of a task, read without
// reading the plan's every task.
type Index interface {
	Summary(ctx context.Context, planID string) (task.Summary, error)
	Rows(ctx context.Context, planID string) (map[string]task.Row, error)
	Running(ctx context.Context, planID string) ([]string, error)
	Reindex(ctx context.Context, tasks []*task.Task) error
	ForgetRows(ctx context.Context, planID string, ids []string) error
}

// A plan's summary and rows equal what its tasks say, after concurrent runs and operators'
// cancels wrote them (each write a compare-and-set, losers reading again); a late copy
// written to the index changes nothing.
func testIndexFollowsTheWrites(t *testing.T, s Store) {
	require.NotNil(t, s.Index, "Store.Index")
	const n = 40
	ctx := t.Context()
	p := createPlan(t, s, "", at(0))
	tasks := make([]*task.Task, n)
	ids := make([]string, n)
	for i := range tasks {
		tasks[i] = newTask(t, p.ID(), fmt.Sprintf("ix-%02d", i), at(0))
		ids[i] = tasks[i].ID()
	}
	createTasks(t, s, tasks...)
	before, err := s.Tasks.Task(ctx, ids[0]) // a PENDING copy, written late below
	require.NoError(t, err)

	for i, err := range runsAndCancels(ctx, s, ids) {
		if err != nil {
			if !errors.Is(err, task.ErrInvalidTransition) { // cancelled before it started
				require.ErrorIs(t, err, task.ErrConflict, "task %d: only a lost race to the cancel fails a run", i)
			}
		}
	}

	all, err := s.Tasks.ByIDs(ctx, ids)
	require.NoError(t, err)
	want := task.NewSummary()
	for _, tk := range all {
		want.Add(task.RowOf(tk), 1)
	}
	require.Positive(t, want.Statuses[task.Completed])
	require.Positive(t, want.Statuses[task.Failed])
	require.Positive(t, want.Statuses[task.Running])

	ix := indexed{s: s, planID: p.ID(), all: all, want: want}
	ix.check(t, "after the runs")
	require.NoError(t, s.Index.Reindex(ctx, []*task.Task{before}))
	ix.check(t, "after a late copy")
	require.NoError(t, s.Index.Reindex(ctx, all))
	ix.check(t, "after the same copies again")
}

// runsAndCancels runs every task of ids (indexRun) while an operator cancels every fifth
// one meanwhile, which the run may lose to; it returns each run's error.
func runsAndCancels(ctx context.Context, s Store, ids []string) []error {
	var wg sync.WaitGroup
	errs := make([]error, len(ids))
	for i := range ids {
		wg.Add(2)
		go func() { defer wg.Done(); errs[i] = indexRun(ctx, s, ids, i) }()
		go func() { // an operator cancels every fifth task meanwhile; the run may lose to it
			defer wg.Done()
			if i%5 == 4 {
				_, _ = s.Tasks.Update(ctx, ids[i], func(tk *task.Task) (*checkpoint.Checkpoint, error) {
					return nil, tk.Cancel(nil, at(100))
				})
			}
		}()
	}
	wg.Wait()
	return errs
}

// indexRun starts task ids[i], then by i: completes it, fails it at its second stage (of a
// permanent or timeout class), has it run its second stage, or leaves it at its first.
func indexRun(ctx context.Context, s Store, ids []string, i int) error {
	tk, err := s.Tasks.BumpFence(ctx, ids[i])
	if err != nil {
		return err
	}
	now := at(10 + i)
	if err := tk.Start(tk.Fence(), now); err != nil {
		return err
	}
	if err := s.Tasks.Save(ctx, tk, nil); err != nil {
		return err
	}
	cp := checkpoint.New(ids[i])
	switch i % 4 {
	case 0: // completes
		for st := range tk.Stages() {
			if err := CompleteStage(tk, cp, st, now.Add(time.Duration(st+1)*time.Second)); err != nil {
				return err
			}
		}
		if err := tk.Complete(now.Add(3 * time.Second)); err != nil {
			return err
		}
	case 1: // fails at the second stage
		if err := CompleteStage(tk, cp, 0, now.Add(time.Second)); err != nil {
			return err
		}
		classes := []stage.Class{stage.ClassPermanent, stage.ClassTimeout}
		f := task.Failure{Stage: "deploy", Class: classes[i%8/4], Message: fmt.Sprintf("boom %d", i)}
		if err := tk.Fail(f, now.Add(2*time.Second)); err != nil {
			return err
		}
	case 2: // runs its second stage
		if err := CompleteStage(tk, cp, 0, now.Add(time.Second)); err != nil {
			return err
		}
	default: // runs its first stage
		return nil
	}
	return s.Tasks.Save(ctx, tk, cp)
}

// indexed is what testIndexFollowsTheWrites expects of the index of plan planID: the summary
// want, and the rows, of its tasks all as stored.
type indexed struct {
	s      Store
	planID string
	all    []*task.Task
	want   task.Summary
}

// running returns the rows of the RUNNING tasks.
func (ix indexed) running() []task.Row {
	var running []task.Row
	for _, tk := range ix.all {
		if tk.Status() == task.Running {
			running = append(running, task.RowOf(tk))
		}
	}
	return running
}

// check checks the plan's summary, RUNNING tasks and rows; msg says when.
func (ix indexed) check(t *testing.T, msg string) {
	t.Helper()
	ix.checkSummary(t, msg)
	ix.checkRunning(t, msg)
	ix.checkRows(t, msg)
}

// checkSummary checks the plan's summary: its counts, each class's sample, the slowest runs.
func (ix indexed) checkSummary(t *testing.T, msg string) {
	t.Helper()
	got, err := ix.s.Index.Summary(t.Context(), ix.planID)
	require.NoError(t, err)
	assert.Equal(t, len(ix.all), got.Total, msg)
	assert.Equal(t, ix.want.Statuses, got.Statuses, msg)
	assert.Equal(t, ix.want.Stages, got.Stages, msg)
	require.Len(t, got.Classes, len(ix.want.Classes), msg)
	for class, c := range ix.want.Classes {
		assert.Equal(t, c.Count, got.Classes[class].Count, "%s: class %s", msg, class)
		sample := got.Classes[class]
		found := false
		for _, tk := range ix.all {
			if f := tk.LastError(); f != nil && string(f.Class) == class && tk.TenantID() == sample.TenantID {
				found = f.Message == sample.Message
			}
		}
		assert.True(t, found, "%s: class %s's sample %+v is one of its tasks", msg, class, sample)
	}
	slowest := map[string]bool{}
	for _, r := range got.Slowest {
		slowest[r.ID] = true
		assert.Equal(t, task.Running, r.Status, msg)
	}
	assert.Len(t, slowest, min(len(ix.running()), task.SlowestLen), msg)
}

// checkRunning checks the ids of the plan's RUNNING tasks.
func (ix indexed) checkRunning(t *testing.T, msg string) {
	t.Helper()
	ids, err := ix.s.Index.Running(t.Context(), ix.planID)
	require.NoError(t, err)
	var wantIDs []string
	for _, r := range ix.running() {
		wantIDs = append(wantIDs, r.ID)
	}
	assert.ElementsMatch(t, wantIDs, ids, msg)
}

// checkRows checks the plan's rows, one per task.
func (ix indexed) checkRows(t *testing.T, msg string) {
	t.Helper()
	rows, err := ix.s.Index.Rows(t.Context(), ix.planID)
	require.NoError(t, err)
	require.Len(t, rows, len(ix.all), msg)
	for _, tk := range ix.all {
		r := rows[tk.ID()]
		assert.Equal(t, tk.TenantID(), r.TenantID, msg)
		assert.Equal(t, tk.Status(), r.Status, "%s: %s", msg, tk.TenantID())
		assert.Equal(t, tk.CurrentStage(), r.Stage, "%s: %s", msg, tk.TenantID())
		assert.Equal(t, task.RowOf(tk).Class, r.Class, "%s: %s", msg, tk.TenantID())
	}
}

// A plan created with its tasks is indexed whole, PENDING at the first stage; recording the
// same tasks again changes nothing; forgetting tasks (the store lost them) drops their rows
// and their counts, and forgetting them again changes nothing.
func testIndexCreationAndForget(t *testing.T, s Store) {
	require.NotNil(t, s.Index, "Store.Index")
	ctx := t.Context()
	p := newPlan(t, "", at(0))
	tasks := make([]*task.Task, len(p.TaskIDs()))
	for i, id := range p.TaskIDs() {
		tk, err := task.Load(task.State{
			ID: id, PlanID: p.ID(), TenantID: fmt.Sprintf("ixc-%d", i), Stages: stages(),
			Status: task.Pending, Attempt: 1, CreatedAt: at(0), UpdatedAt: at(0),
		})
		require.NoError(t, err)
		tasks[i] = tk
	}
	require.NoError(t, s.Creator.CreatePlan(ctx, p, tasks))
	n := len(tasks)
	require.GreaterOrEqual(t, n, 2, "the plan has tasks to forget and keep")
	check := func(msg string, want int) {
		t.Helper()
		sum, err := s.Index.Summary(ctx, p.ID())
		require.NoError(t, err)
		assert.Equal(t, want, sum.Total, msg)
		assert.Equal(t, map[task.Status]int{task.Pending: want}, sum.Statuses, msg)
		assert.Equal(t, map[int]map[task.Status]int{0: {task.Pending: want}}, sum.Stages, msg)
		rows, err := s.Index.Rows(ctx, p.ID())
		require.NoError(t, err)
		require.Len(t, rows, want, msg)
		for _, tk := range tasks[n-want:] {
			assert.Equal(t, task.RowOf(tk).TenantID, rows[tk.ID()].TenantID, msg)
			assert.Equal(t, task.Pending, rows[tk.ID()].Status, msg)
		}
	}
	check("after the creation", n)
	require.NoError(t, s.Index.Reindex(ctx, tasks))
	check("after the same tasks again", n)
	require.NoError(t, s.Index.ForgetRows(ctx, p.ID(), []string{tasks[0].ID()}))
	check("after one is forgotten", n-1)
	require.NoError(t, s.Index.ForgetRows(ctx, p.ID(), []string{tasks[0].ID()}))
	check("after it is forgotten again", n-1)
}
