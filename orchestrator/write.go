package orchestrator

import (
	"context"
	"errors"
	"fmt"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/task"
)

// errRunOver: the task a run was writing changed under it in a way that ends the run (an
// operator cancelled it, on this executor or another). The store keeps that change: the run
// writes nothing more and stops.
var errRunOver = errors.New("orchestrator: the task was ended by another writer")

// maxCommitTries bounds how often a run reads its task again and re-applies a transition
// after losing the compare-and-set to another writer.
const maxCommitTries = 16

// commit applies fn to the running task and saves it with cp, even after the run's context
// ended (a run always records how it ended), and tells the watchers.
func (run *taskRun) commit(cp *checkpoint.Checkpoint, fn func(t *task.Task) error) error {
	return run.commitAs(cp, fn, run.o.saveTask)
}

// commitAs is commit saving with save: a heartbeat saves without telling the watchers (it is
// no transition). The save is a compare-and-set on the run's copy of the task: when another
// writer changed the task since (an operator's pause request, or cancel), the run reads it
// again (reload) and applies fn to the fresh copy. This is how a run learns of commands
// from the reply to its own next write. fn must only apply task transitions: it may run
// more than once. It runs on a copy, which becomes the run's only once the store took it: a
// transition applied half-way (fn failed), or a write refused, never reaches the run's next
// write (a heartbeat would otherwise store it).
func (run *taskRun) commitAs(cp *checkpoint.Checkpoint, fn func(t *task.Task) error,
	save func(context.Context, *task.Task, *checkpoint.Checkpoint) error) error {
	unlock := run.o.taskLocks.lock(run.id)
	defer unlock()
	ctx, cancel := run.writeContext()
	defer cancel()
	for tries := 1; ; tries++ {
		if run.selfFenced() {
			run.cancel(errLeaseLost)
			return fmt.Errorf("orchestrator: write of task %s refused: %w", run.id, errLeaseLost)
		}
		next := run.cur().Clone() // the run's copy changes only with a write the store took
		if err := fn(next); err != nil {
			return err
		}
		err := run.o.countFenced(save(ctx, next, cp))
		if err == nil {
			run.task.Store(next)
			return nil
		}
		if errors.Is(err, task.ErrLeaseExpired) {
			run.cancel(errLeaseLost)
			return fmt.Errorf("orchestrator: write of task %s: %w (%w)", run.id, errLeaseLost, err)
		}
		if !errors.Is(err, task.ErrConflict) || tries == maxCommitTries {
			return err
		}
		run.o.cfg.Logger.Debug("write lost to another writer: the task is read again", "task_id", run.id,
			"version", next.Version(), "stage", next.CurrentStage(), "try", tries, "err", err)
		if err := run.reload(ctx); err != nil {
			return err
		}
	}
}

// writeContext bounds a write of the run: persistTimeout, and, with a self-fencing lease, the
// store sends it (or sends it again, while Redis does not answer) only while the lease is
// within its deadline (task.WhileHeld). Not the deadline as it stands when the write begins:
// the lease's refreshes move it on while the write waits for a slow Redis, and a write cut at
// it would stop a run whose lease holds.
func (run *taskRun) writeContext() (context.Context, context.CancelFunc) {
	ctx := context.WithoutCancel(run.ctx)
	if !run.deadline().IsZero() {
		ctx = task.WhileHeld(ctx, run.holds)
	}
	return context.WithTimeout(ctx, persistTimeout) // one timer per write
}

// reload replaces the run's copy of its task with the task as stored, after a write of the
// run lost the compare-and-set. It fails with task.ErrFenced when another run took the task
// (a newer fence epoch), and, once the run has started, with errRunOver when the task is no
// longer RUNNING (cancelled by an operator): the run's context is cancelled with that cause,
// so its stage stops too. The caller holds the task lock.
func (run *taskRun) reload(ctx context.Context) error {
	fresh, err := run.o.tasks.Task(ctx, run.id)
	if err != nil {
		return fmt.Errorf("orchestrator: read task %s again: %w", run.id, err)
	}
	if fresh.Fence() > run.cur().Fence() {
		return task.ErrFenced
	}
	run.task.Store(fresh)
	if run.started && fresh.Status() != task.Running {
		if fresh.Status() == task.Cancelled {
			run.cancel(errCancelRequested)
		} else {
			run.cancel(errRunOver)
		}
		return errRunOver
	}
	return nil
}

// refresh reads the run's task again when a signal said an operator changed it (a pause
// request from another executor): the next boundary then sees the change without waiting for
// the run's next write to conflict.
func (run *taskRun) refresh() error {
	if !run.recheck.Swap(false) {
		return nil
	}
	unlock := run.o.taskLocks.lock(run.id)
	defer unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(run.ctx), persistTimeout)
	defer cancel()
	return run.reload(ctx)
}

// keepCheckpoint records a stage that completed after an operator ended the task meanwhile
// (the run's write of its completion lost to the operator's cancel): the checkpoint is saved
// alone, with the task as the operator left it, so a retry --from-checkpoint does not run the
// stage again. Best effort: a task that changed again keeps its checkpoint as it was.
func (run *taskRun) keepCheckpoint(cp *checkpoint.Checkpoint) error {
	unlock := run.o.taskLocks.lock(run.id)
	defer unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(run.ctx), persistTimeout)
	defer cancel()
	t := run.cur().Clone()
	if err := run.o.tasks.Save(ctx, t, cp); err != nil {
		return err
	}
	run.task.Store(t)
	return nil
}
