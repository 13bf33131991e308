package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/lease"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// errSkip tells withTask that fn decided not to change the task.
var errSkip = errors.New("orchestrator: no change")

// errNotPending: a task claimed from the mirror turned out to have moved on in the store.
var errNotPending = errors.New("orchestrator: task is no longer PENDING")

// taskRun is a task being run by this process.
type taskRun struct {
	id       string
	planID   string
	tenantID string
	attempt  int
	task     *task.Task // guarded by the task lock
	ctx      context.Context
	cancel   context.CancelCauseFunc
	done     chan struct{} // closed when the run has written its last change
}

// withTask applies fn to task id under its lock (the running aggregate when this process runs
// it) and saves the result, with the checkpoint fn returns, if any.
func (o *Orchestrator) withTask(ctx context.Context, id string, fn func(t *task.Task, run *taskRun) (*checkpoint.Checkpoint, error)) error {
	unlock := o.taskLocks.lock(id)
	defer unlock()
	o.mu.Lock()
	run := o.active[id]
	o.mu.Unlock()
	var t *task.Task
	if run != nil {
		t = run.task
	} else {
		var err error
		if t, err = o.tasks.Task(ctx, id); err != nil {
			return err
		}
	}
	cp, err := fn(t, run)
	if err != nil {
		return err
	}
	return o.countFenced(o.saveTask(ctx, t, cp))
}

// commit applies fn to the running task and saves it with cp, even after the run's context
// ended (a run always records how it ended), and tells the watchers.
func (o *Orchestrator) commit(run *taskRun, cp *checkpoint.Checkpoint, fn func(t *task.Task) error) error {
	return o.commitAs(run, cp, fn, o.saveTask)
}

// commitAs is commit saving with save: a heartbeat saves without telling the watchers (it is
// no transition).
func (o *Orchestrator) commitAs(run *taskRun, cp *checkpoint.Checkpoint, fn func(t *task.Task) error,
	save func(context.Context, *task.Task, *checkpoint.Checkpoint) error) error {
	unlock := o.taskLocks.lock(run.id)
	defer unlock()
	if err := fn(run.task); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(run.ctx), persistTimeout)
	defer cancel()
	return o.countFenced(save(ctx, run.task, cp))
}

// claim makes task id this process's run, if it is still PENDING. A previous run of the same
// task here (it paused, and was resumed at once) is waited for first, until it has released
// the tenant's lease: the new run must not find its own task's lease still held.
func (o *Orchestrator) claim(ctx context.Context, id string, cancel context.CancelCauseFunc) *taskRun {
	for {
		o.mu.Lock()
		prev := o.active[id]
		o.mu.Unlock()
		if prev == nil {
			break
		}
		select { // without the task lock: the previous run may need it to finish
		case <-prev.done:
		case <-ctx.Done():
			return nil
		}
	}
	unlock := o.taskLocks.lock(id)
	defer unlock()
	read := o.tasks.Task
	if p, ok := o.tasks.(peeker); ok {
		read = p.Peek
	}
	t, err := read(ctx, id)
	if err != nil {
		o.cfg.Logger.Error("claim task", "task_id", id, "err", err)
		return nil
	}
	if t.Status() != task.Pending {
		return nil // cancelled or changed while queued
	}
	run := &taskRun{
		id: id, planID: t.PlanID(), tenantID: t.TenantID(), attempt: t.Attempt(),
		task: t, ctx: ctx, cancel: cancel, done: make(chan struct{}),
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.active[id] != nil {
		return nil // another claim won the race: its planRun runs the task
	}
	o.active[id] = run
	return run
}

func (o *Orchestrator) unclaim(run *taskRun) {
	o.mu.Lock()
	delete(o.active, run.id)
	o.mu.Unlock()
	close(run.done)
}

// runTask runs one task to its end (or its next pause) and reports whether it ended FAILED.
func (o *Orchestrator) runTask(pr *planRun, id string) (failed bool) {
	ctx, cancel := context.WithCancelCause(o.ctx)
	defer cancel(nil)
	run := o.claim(ctx, id, cancel)
	if run == nil {
		return false
	}
	defer o.unclaim(run)
	// Every line of a run names its plan, task, tenant, run attempt and stage (log is the
	// run's logger; at adds the stage the run starts at, each stage's lines add their own).
	log := o.cfg.Logger.With("plan_id", run.planID, "task_id", id, "tenant_id", run.tenantID, "attempt", run.attempt)
	at := log.With("stage", stageAt(run.task))
	if o.draining.Load() { // claimed as the shutdown began: it never starts
		o.endUnstarted(run, at)
		return false
	}

	held, err := o.locker.Acquire(ctx, run.tenantID, leaseOwner(run.planID, id))
	if err != nil {
		if ctx.Err() != nil {
			o.endUnstarted(run, at)
			return false
		}
		class := stage.ClassRetryable
		if errors.Is(err, lease.ErrHeld) {
			class = stage.ClassTenantLocked
			o.cfg.Metrics.LeaseContended()
		}
		f := task.Failure{Class: class, Message: err.Error()}
		err = o.commit(run, nil, func(t *task.Task) error {
			if err := t.Start(t.Fence(), o.now()); err != nil {
				return err
			}
			return t.Fail(f, o.now())
		})
		at.Warn("task failed: tenant lease not taken", "class", class, "err", f.Message, "save_err", err)
		return true
	}
	defer func() {
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
		defer rcancel()
		if err := held.Release(rctx); err != nil {
			at.Warn("release tenant lease", "err", err)
		}
	}()
	go func() {
		select {
		case <-held.Lost():
			o.cfg.Metrics.LeaseLost()
			cancel(errLeaseLost)
		case <-ctx.Done():
		}
	}()

	epoch, err := o.start(run)
	if err != nil {
		if ctx.Err() != nil {
			o.endUnstarted(run, at)
			return false
		}
		at.Warn("task not started", "err", err)
		return false
	}
	stopBeat := o.heartbeat(run, at)
	defer stopBeat()
	cp, err := checkpoint.New(id), error(nil)
	if run.task.CurrentStage() > 0 { // at stage 0 a stored checkpoint holds nothing to resume from
		cp, err = o.ckpts.Checkpoint(ctx, id)
		if errors.Is(err, checkpoint.ErrNotFound) {
			cp, err = checkpoint.New(id), nil
		}
	}
	if err == nil && cp.Next() != run.task.CurrentStage() {
		err = fmt.Errorf("checkpoint resumes at stage %d, task at %d", cp.Next(), run.task.CurrentStage())
	}
	if err != nil {
		return o.end(run, nil, task.Failure{Class: stage.ClassPermanent, Message: "load checkpoint: " + err.Error()}, at)
	}

	stages := run.task.Stages()
	resumedDone := cp.Next() >= len(stages) // a checkpoint with every stage done: only Complete is left
	for i := cp.Next(); i < len(stages); i++ {
		stageLog := log.With("stage", stages[i].Name)
		if stop, failed := o.boundary(run, stages[i].Name, stageLog); stop {
			return failed
		}
		out, entry, f, wait := o.runStage(run, pr, i, cp, stageLog)
		if wait != nil {
			o.park(run, wait, stageLog)
			return false
		}
		if f != nil {
			return o.end(run, entry, *f, stageLog)
		}
		err := o.commit(run, cp, func(t *task.Task) error {
			if err := t.Record(*entry); err != nil {
				return err
			}
			if err := t.CompleteStage(i, o.now()); err != nil {
				return err
			}
			if i == len(stages)-1 { // the last stage's write also completes the task
				if err := t.Complete(o.now()); err != nil {
					return err
				}
			}
			return cp.Record(i, stages[i].Name, out, epoch, o.now())
		})
		if err != nil {
			stageLog.Error("save completed stage", "err", err)
			return false
		}
		stageLog.Debug("stage completed", "stage_attempt", entry.Attempt, "duration_ms", entry.EndedAt.Sub(entry.StartedAt).Milliseconds())
	}
	last := log.With("stage", stages[len(stages)-1].Name)
	if resumedDone {
		if err := o.commit(run, nil, func(t *task.Task) error { return t.Complete(o.now()) }); err != nil {
			last.Error("complete task", "err", err)
			return false
		}
	}
	last.Info("task completed")
	return false
}

// stageAt names the stage t runs next (its last stage once every stage ran).
func stageAt(t *task.Task) string {
	stages := t.Stages()
	return stages[min(t.CurrentStage(), len(stages)-1)].Name
}

// start bumps the task's fence epoch (the run holds the tenant's lease now) and starts the
// task as the store holds it at that epoch, which may be newer than the copy claimed from the
// mirror: another executor may have changed it meanwhile, and then it is not started.
func (o *Orchestrator) start(run *taskRun) (uint64, error) {
	unlock := o.taskLocks.lock(run.id)
	defer unlock()
	fresh, err := o.tasks.BumpFence(run.ctx, run.id)
	if err != nil {
		return 0, err
	}
	if fresh.Status() != task.Pending {
		return 0, fmt.Errorf("%w: it is %s in the store", errNotPending, fresh.Status())
	}
	if err := fresh.Start(fresh.Fence(), o.now()); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(run.ctx), persistTimeout)
	defer cancel()
	if err := o.countFenced(o.saveTask(ctx, fresh, nil)); err != nil {
		return 0, err
	}
	run.task = fresh
	return fresh.Fence(), nil
}

// boundary honours, between two stages, a cancelled run or a requested pause.
func (o *Orchestrator) boundary(run *taskRun, next string, log *slog.Logger) (stop, failed bool) {
	if run.ctx.Err() != nil {
		return true, o.end(run, nil, o.causeFailure(run, next), log)
	}
	if o.draining.Load() {
		o.stopForShutdown(run, next, log)
		return true, false
	}
	paused := false
	err := o.commit(run, nil, func(t *task.Task) error {
		if !t.PauseRequested() {
			return errSkip
		}
		paused = true
		return t.Pause(o.now())
	})
	if err != nil && !errors.Is(err, errSkip) {
		log.Error("pause task", "err", err)
		return true, false
	}
	return paused, false
}

// causeFailure describes why the run's context ended.
func (o *Orchestrator) causeFailure(run *taskRun, stageName string) task.Failure {
	cause := context.Cause(run.ctx)
	switch {
	case errors.Is(cause, errLeaseLost):
		return task.Failure{Stage: stageName, Class: stage.ClassLeaseLost, Message: cause.Error()}
	case errors.Is(cause, errFenced):
		return task.Failure{Stage: stageName, Class: stage.ClassFenced, Message: cause.Error()}
	case errors.Is(cause, errShutdown):
		return task.Failure{Stage: stageName, Class: stage.ClassShutdown, Message: cause.Error()}
	default:
		return task.Failure{Stage: stageName, Class: stage.ClassCancelled, Message: cause.Error()}
	}
}

// end records the run's last attempt (if any) and its end: CANCELLED on an operator's cancel,
// INTERRUPTED when the lease or the executor went away, FAILED otherwise. It reports FAILED.
func (o *Orchestrator) end(run *taskRun, entry *task.Attempt, f task.Failure, log *slog.Logger) (failed bool) {
	cause := context.Cause(run.ctx)
	if run.ctx.Err() != nil && errors.Is(cause, errFenced) {
		// The store keeps the other executor's state: this run has nothing left to write.
		log.Warn("run stopped: fenced", "class", stage.ClassFenced, "stage", f.Stage)
		return false
	}
	err := o.commit(run, nil, func(t *task.Task) error {
		if entry != nil {
			if err := t.Record(*entry); err != nil {
				return err
			}
		}
		switch {
		case run.ctx.Err() != nil && errors.Is(cause, errCancelRequested):
			return t.Cancel(&f, o.now())
		case run.ctx.Err() != nil:
			return t.Interrupt(f, o.now())
		default:
			failed = true
			return t.Fail(f, o.now())
		}
	})
	if err != nil {
		log.Error("end task", "class", f.Class, "err", err)
		return failed
	}
	level := slog.LevelWarn
	if errors.Is(cause, errCancelRequested) {
		level = slog.LevelInfo
	}
	log.Log(context.Background(), level, "task ended", "status", run.task.Status(), "class", f.Class, "stage_attempt", f.Attempt, "err", f.Message)
	return failed
}

// heartbeat records, every LeaseTTL/3 while the run lasts, that its owner is alive, so long
// stages are not mistaken for a dead owner. It returns a func that stops it and waits.
func (o *Orchestrator) heartbeat(run *taskRun, log *slog.Logger) (stop func()) {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(o.cfg.LeaseTTL / 3)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				err := o.commitAs(run, nil, func(t *task.Task) error { return t.Beat(o.now()) }, o.tasks.Save)
				if err != nil && !errors.Is(err, task.ErrInvalidTransition) {
					log.Warn("heartbeat", "err", err)
				}
			case <-done:
				return
			case <-run.ctx.Done():
				return
			}
		}
	}()
	return func() { close(done); <-stopped }
}
