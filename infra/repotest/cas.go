package repotest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// The compare-and-set part of the contract: every write is accepted only from a copy at the
// stored version, and Update re-applies its transition after losing to another writer, so
// that concurrent writers never lose one another's changes.

func testTaskSaveIsCompareAndSet(t *testing.T, s Store) {
	tk := newTask(t, ulid.Make().String(), "tenant-a", at(0))
	createTasks(t, s, tk)
	first, err := s.Tasks.Task(t.Context(), tk.ID())
	require.NoError(t, err)
	second, err := s.Tasks.Task(t.Context(), tk.ID())
	require.NoError(t, err)
	require.Equal(t, uint64(0), first.Version(), "a new task is at version 0")

	require.NoError(t, first.RequestPause(at(1)))
	require.NoError(t, s.Tasks.Save(t.Context(), first, nil))
	assert.Equal(t, uint64(1), first.Version(), "a saved copy carries the new version")

	cp := checkpoint.New(tk.ID())
	require.NoError(t, cp.Record(0, "build", nil, 0, at(2)))
	require.NoError(t, second.Cancel(nil, at(2)))
	require.ErrorIs(t, s.Tasks.Save(t.Context(), second, cp), task.ErrConflict, "a copy read before another write")

	got, err := s.Tasks.Task(t.Context(), tk.ID())
	require.NoError(t, err)
	requireSameTask(t, first, got)
	_, err = s.Checkpoints.Checkpoint(t.Context(), tk.ID())
	require.ErrorIs(t, err, checkpoint.ErrNotFound, "a refused save writes no checkpoint")

	// The saved copy may write again: it is at the stored version.
	require.NoError(t, first.Resume(at(3)))
	require.NoError(t, s.Tasks.Save(t.Context(), first, nil))
	assert.Equal(t, uint64(2), first.Version())
}

func testTaskUpdate(t *testing.T, s Store) {
	tk := newTask(t, ulid.Make().String(), "tenant-a", at(0))
	createTasks(t, s, tk)

	tests := []struct {
		name    string
		fn      func(t *task.Task) (*checkpoint.Checkpoint, error)
		wantErr error
		want    task.Status
	}{
		{"a transition is saved", func(t *task.Task) (*checkpoint.Checkpoint, error) {
			return nil, t.RequestPause(at(1))
		}, nil, task.Pending},
		{"a refused transition writes nothing", func(t *task.Task) (*checkpoint.Checkpoint, error) {
			return nil, t.Complete(at(2))
		}, task.ErrInvalidTransition, task.Pending},
		{"fn's own error is returned as it is", func(*task.Task) (*checkpoint.Checkpoint, error) {
			return nil, errStop
		}, errStop, task.Pending},
		{"a checkpoint returned by fn is saved with it", func(t *task.Task) (*checkpoint.Checkpoint, error) {
			cp := checkpoint.New(t.ID())
			return cp, t.Cancel(nil, at(3))
		}, nil, task.Cancelled},
	}
	for _, tt := range tests { // in order: each case starts from the one before
		before, err := s.Tasks.Task(t.Context(), tk.ID())
		require.NoError(t, err, tt.name)
		got, err := s.Tasks.Update(t.Context(), tk.ID(), tt.fn)
		stored, rerr := s.Tasks.Task(t.Context(), tk.ID())
		require.NoError(t, rerr, tt.name)
		if tt.wantErr != nil {
			require.ErrorIs(t, err, tt.wantErr, tt.name)
			requireSameTask(t, before, stored)
			continue
		}
		require.NoError(t, err, tt.name)
		assert.Equal(t, before.Version()+1, got.Version(), tt.name)
		requireSameTask(t, got, stored)
		assert.Equal(t, tt.want, stored.Status(), tt.name)
	}
	_, err := s.Tasks.Update(t.Context(), ulid.Make().String(), func(*task.Task) (*checkpoint.Checkpoint, error) { return nil, nil })
	require.ErrorIs(t, err, task.ErrNotFound)
}

var errStop = errors.New("repotest: fn says stop")

// testTaskConcurrentUpdates: many writers each record attempts on one RUNNING task through
// Update, at once; not one attempt may be lost (a last-writer-wins store loses most).
func testTaskConcurrentUpdates(t *testing.T, s Store) {
	const writers, each = 8, 6
	tk := newTask(t, ulid.Make().String(), "tenant-a", at(0))
	createTasks(t, s, tk)
	run, _ := startRun(t, s, tk.ID(), at(1))
	require.NoError(t, s.Tasks.Save(t.Context(), run, nil))
	start := run.Version()

	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				_, err := s.Tasks.Update(t.Context(), tk.ID(), func(t *task.Task) (*checkpoint.Checkpoint, error) {
					return nil, t.Record(task.Attempt{
						StageIndex: 0, Stage: "build", Run: 1, Attempt: w*each + i + 1, StartedAt: at(2), EndedAt: at(2),
						Outcome: task.OutcomeFailed, Class: stage.ClassRetryable,
					})
				})
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	got, err := s.Tasks.Task(t.Context(), tk.ID())
	require.NoError(t, err)
	require.Len(t, got.Ledger(), writers*each, "every writer's attempt is there")
	seen := map[int]bool{}
	for _, a := range got.Ledger() {
		seen[a.Attempt] = true
	}
	assert.Len(t, seen, writers*each, "each attempt once")
	assert.Equal(t, start+writers*each, got.Version(), "one version per write")
}

// testConcurrentRetriesOneWins: operators retry one FAILED task at once; exactly one retry is
// applied, the others are refused by the transition (the task is PENDING by then).
func testConcurrentRetriesOneWins(t *testing.T, s Store) {
	const retries = 8
	tk := newTask(t, ulid.Make().String(), "tenant-a", at(0))
	createTasks(t, s, tk)
	run, _ := startRun(t, s, tk.ID(), at(1))
	require.NoError(t, run.Fail(task.Failure{Stage: "build", Class: stage.ClassPermanent, Message: "no"}, at(2)))
	require.NoError(t, s.Tasks.Save(t.Context(), run, nil))

	var wg sync.WaitGroup
	var mu sync.Mutex
	won, refused := 0, 0
	for range retries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Tasks.Update(t.Context(), tk.ID(), func(t *task.Task) (*checkpoint.Checkpoint, error) {
				return nil, t.Retry(0, at(3))
			})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case errors.Is(err, task.ErrInvalidTransition):
				refused++
			default:
				t.Errorf("retry: %v", err)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 1, won, "exactly one retry wins")
	assert.Equal(t, retries-1, refused)
	got, err := s.Tasks.Task(t.Context(), tk.ID())
	require.NoError(t, err)
	assert.Equal(t, task.Pending, got.Status())
	assert.Equal(t, 2, got.Attempt(), "one new run, not several")
}

func testPlanSaveIsCompareAndSet(t *testing.T, s Store) {
	p := createPlan(t, s, "", at(0))
	first, err := s.Plans.Plan(t.Context(), p.ID())
	require.NoError(t, err)
	second, err := s.Plans.Plan(t.Context(), p.ID())
	require.NoError(t, err)
	require.NoError(t, first.Start(at(1)))
	require.NoError(t, s.Plans.Save(t.Context(), first))
	assert.Equal(t, p.Version()+1, first.Version())

	require.NoError(t, second.Cancel(at(2)))
	require.ErrorIs(t, s.Plans.Save(t.Context(), second), plan.ErrConflict, "a copy read before another write")
	got, err := s.Plans.Plan(t.Context(), p.ID())
	require.NoError(t, err)
	requireSamePlan(t, first, got)
	assert.Equal(t, plan.Running, got.Status())
}

// testPlanConcurrentUpdates: writers pause and resume one plan at once through Update; every
// change counts (the version) and the last state follows from their number.
func testPlanConcurrentUpdates(t *testing.T, s Store) {
	const writers, each = 6, 5
	p := createPlan(t, s, "", at(0))
	require.NoError(t, p.Start(at(1)))
	require.NoError(t, s.Plans.Save(t.Context(), p))
	start := p.Version()

	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				_, err := s.Plans.Update(t.Context(), p.ID(), func(p *plan.Plan) error {
					if p.Status() == plan.Running {
						return p.Pause(at(1))
					}
					return p.Resume()
				})
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	got, err := s.Plans.Plan(t.Context(), p.ID())
	require.NoError(t, err)
	assert.Equal(t, start+writers*each, got.Version(), "one version per change: none lost")
	want := plan.Running
	if writers*each%2 == 1 {
		want = plan.Paused
	}
	assert.Equal(t, want, got.Status(), fmt.Sprintf("%d toggles", writers*each))
	_, err = s.Plans.Update(t.Context(), ulid.Make().String(), func(*plan.Plan) error { return nil })
	require.ErrorIs(t, err, plan.ErrNotFound)
}
