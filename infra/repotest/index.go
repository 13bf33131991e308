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

	classes := []stage.Class{stage.ClassPermanent, stage.ClassTimeout}
	run := func(i int) error {
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
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(2)
		go func() { defer wg.Done(); errs[i] = run(i) }()
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
	for i, err := range errs {
		if err != nil {
			if !errors.Is(err, task.ErrInvalidTransition) { // cancelled before it started
				require.ErrorIs(t, err, task.ErrConflict, "task %d: only a lost race to the cancel fails a run", i)
			}
		}
	}

	all, err := s.Tasks.ByIDs(ctx, ids)
	require.NoError(t, err)
	want := task.NewSummary()
	var running []task.Row
	for _, tk := range all {
		want.Add(task.RowOf(tk), 1)
		if tk.Status() == task.Running {
			running = append(running, task.RowOf(tk))
		}
	}
	require.Positive(t, want.Statuses[task.Completed])
	require.Positive(t, want.Statuses[task.Failed])
	require.Positive(t, want.Statuses[task.Running])

	check := func(msg string) {
		t.Helper()
		got, err := s.Index.Summary(ctx, p.ID())
		require.NoError(t, err)
		assert.Equal(t, n, got.Total, msg)
		assert.Equal(t, want.Statuses, got.Statuses, msg)
		assert.Equal(t, want.Stages, got.Stages, msg)
		require.Len(t, got.Classes, len(want.Classes), msg)
		for class, c := range want.Classes {
			assert.Equal(t, c.Count, got.Classes[class].Count, "%s: class %s", msg, class)
			sample := got.Classes[class]
			found := false
			for _, tk := range all {
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
		assert.Len(t, slowest, min(len(running), task.SlowestLen), msg)
		ids, err := s.Index.Running(ctx, p.ID())
		require.NoError(t, err)
		var wantIDs []string
		for _, r := range running {
			wantIDs = append(wantIDs, r.ID)
		}
		assert.ElementsMatch(t, wantIDs, ids, msg)

		rows, err := s.Index.Rows(ctx, p.ID())
		require.NoError(t, err)
		require.Len(t, rows, n, msg)
		for _, tk := range all {
			r := rows[tk.ID()]
			assert.Equal(t, tk.TenantID(), r.TenantID, msg)
			assert.Equal(t, tk.Status(), r.Status, "%s: %s", msg, tk.TenantID())
			assert.Equal(t, tk.CurrentStage(), r.Stage, "%s: %s", msg, tk.TenantID())
			assert.Equal(t, task.RowOf(tk).Class, r.Class, "%s: %s", msg, tk.TenantID())
		}
	}
	check("after the runs")
	require.NoError(t, s.Index.Reindex(ctx, []*task.Task{before}))
	check("after a late copy")
	require.NoError(t, s.Index.Reindex(ctx, all))
	check("after the same copies again")
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
