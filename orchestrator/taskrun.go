package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/lease"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// errSkip tells update that fn decided not to change the task.
var errSkip = errors.New("orchestrator: no change")

// errNotPending: a task claimed from the mirror turned out to have moved on in the store.
var errNotPending = errors.New("orchestrator: task is no longer PENDING")

// taskRun is a task being run by this process.
type taskRun struct {
	id       string
	planID   string
	tenantID string
	attempt  int
	task     atomic.Pointer[task.Task] // the run's copy, as it last wrote or read it (cur); set under the task lock
	started  bool                      // the run has started the task (RUNNING at its fence epoch); guarded by the task lock
	recheck  atomic.Bool
	ctx      context.Context
	cancel   context.CancelCauseFunc
	done     chan struct{}             // closed when the run has written its last change
	held     atomic.Pointer[heldLease] // the tenant's lease, once taken
}

// heldLease is the lease a run holds.
type heldLease struct{ lease.Lease }

// deadline is the run's lease deadline (lease.Lease.Deadline): zero before the lease is taken,
// or when it does not self-fence.
func (r *taskRun) deadline() time.Time {
	if h := r.held.Load(); h != nil {
		return h.Deadline()
	}
	return time.Time{}
}

// selfFenced reports whether the run's self-fencing lease has passed its deadline: the run
// must stop before anything else, and write nothing more (another executor may have judged
// its owner gone, and taken the tenant).
func (r *taskRun) selfFenced() bool { return !lease.Valid(r.deadline(), time.Now()) }

// holds reports whether the run's lease still holds (the opposite of selfFenced).
func (r *taskRun) holds() bool { return !r.selfFenced() }

// cur returns the run's copy of its task. A copy is never changed once the run holds it: a
// write applies its change to a clone and sets that once the store took it (commitAs), a read
// sets the task as read (reload), so the run's goroutine reads it while its heartbeat writes.
func (r *taskRun) cur() *task.Task { return r.task.Load() }

// claim makes task id this process's run, if it is still PENDING (nil, nil when it is not,
// or when another claim here runs it). A previous run of the same task here (it paused, and
// was resumed at once) is waited for first, until it has released the tenant's lease: the new
// run must not find its own task's lease still held. An error means the task could not be
// read (or the wait was cut short): the caller hands it back (claimFailed), never drops it.
func (o *Orchestrator) claim(ctx context.Context, id string, cancel context.CancelCauseFunc) (*taskRun, error) {
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
			return nil, fmt.Errorf("orchestrator: claim task %s: %w", id, context.Cause(ctx))
		}
	}
	unlock := o.taskLocks.lock(id)
	defer unlock()
	// A local copy will do (task.Repository.Peek): start re-reads the task as the store holds
	// it at the run's new fence epoch, so a stale copy starts nothing.
	t, err := o.tasks.Peek(ctx, id)
	if err == nil && t.Status() != task.Pending {
		// The local copy may be stale: another executor may have made the task PENDING
		// again (a retry) and queued it. The store decides.
		t, err = o.tasks.Task(ctx, id)
	}
	if err != nil {
		return nil, fmt.Errorf("orchestrator: claim task %s: %w", id, err)
	}
	if t.Status() != task.Pending {
		return nil, nil // cancelled or changed while queued
	}
	run := &taskRun{
		id: id, planID: t.PlanID(), tenantID: t.TenantID(), attempt: t.Attempt(),
		ctx: ctx, cancel: cancel, done: make(chan struct{}),
	}
	run.task.Store(t)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.active[id] != nil {
		return nil, nil // another claim won the race: its planRun runs the task
	}
	o.active[id] = run
	return run, nil
}

func (o *Orchestrator) unclaim(run *taskRun) {
	o.mu.Lock()
	delete(o.active, run.id)
	o.mu.Unlock()
	close(run.done)
}

// runEnd is how a run of a claimed task ended, for its plan's Queue.
type runEnd int

const (
	endDone       runEnd = iota // it ended (or paused, or never started): its slot is freed
	endFailed                   // it ended FAILED: its slot is freed and the failure counted
	endHandedBack               // it went back to the front of its plan's queue (a clean stop)
)

// ended is endFailed when failed, else endDone.
func ended(failed bool) runEnd {
	if failed {
		return endFailed
	}
	return endDone
}

// runTask runs one task to its end (or its next pause, or its hand-back) and reports how it
// ended: it claims the task, takes the tenant's lease, starts the task at a new fence epoch
// and runs its stages from its checkpoint.
func (o *Orchestrator) runTask(ph *planHere, id string) runEnd {
	ctx, cancel := context.WithCancelCause(o.ctx)
	defer cancel(nil)
	run, err := o.claim(ctx, id, cancel)
	if err != nil {
		return o.claimFailed(id, err)
	}
	if run == nil {
		return endDone
	}
	defer o.unclaim(run)
	// Every line of a run names its plan, task, tenant, run attempt and stage (log is the
	// run's logger; at adds the stage the run starts at, each stage's lines add their own).
	log := o.cfg.Logger.With("plan_id", run.planID, "task_id", id, "tenant_id", run.tenantID, "attempt", run.attempt)
	at := log.With("stage", stageAt(run.cur()))
	if o.draining.Load() { // claimed as the shutdown began: it never starts here
		return o.endUnstarted(run, at)
	}
	held, end := o.takeLease(run, at)
	if held == nil {
		return end
	}
	defer o.releaseLease(run, held, at)
	epoch, err := o.start(run)
	if err != nil {
		return o.notStarted(run, err, at)
	}
	at.Info("task started", "run", run.attempt, "from_stage", run.cur().CurrentStage())
	stopBeat := o.heartbeat(run, at)
	defer stopBeat()
	cp, err := o.resumePoint(run)
	if err != nil {
		return ended(o.end(run, nil, task.Failure{Class: stage.ClassPermanent, Message: "load checkpoint: " + err.Error()}, false, at))
	}
	return o.runStages(run, ph, cp, epoch, log)
}

// takeLease takes the tenant's lease for the run and watches it: its loss cancels the run.
// When it is not taken (nil) the task has ended (endFailed: FAILED, class tenant_locked when
// another run holds the tenant), or the run was cancelled before it started.
func (o *Orchestrator) takeLease(run *taskRun, at *slog.Logger) (lease.Lease, runEnd) {
	held, err := o.locker.Acquire(run.ctx, run.tenantID, leaseOwner(o.cfg.Name, run.planID, run.id))
	if err != nil {
		if run.ctx.Err() != nil {
			return nil, o.endUnstarted(run, at)
		}
		if o.cfg.Shared && (!errors.Is(err, lease.ErrHeld) || o.heldByItself(run)) {
			// Redis away: nothing proves the tenant free, and nothing was started; the task
			// goes back to its plan's queue, PENDING, to run once Redis answers. So does a
			// task whose tenant is held by a lease of its own earlier run (one that stopped
			// before its start reached Redis): that key expires by itself.
			return nil, o.claimFailed(run.id, err)
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
		return nil, endFailed
	}
	run.held.Store(&heldLease{held})
	go func() {
		select {
		case <-held.Lost():
			o.cfg.Metrics.LeaseLost()
			run.cancel(errLeaseLost)
		case <-run.ctx.Done():
		}
	}()
	return held, endDone
}

// heldByItself reports whether the tenant's lease is held by a run of the run's own task.
func (o *Orchestrator) heldByItself(run *taskRun) bool {
	h, held, err := o.locker.Holder(run.ctx, run.tenantID)
	return err == nil && held && ownsTask(h.Owner, run.planID, run.id)
}

// notStarted decides what becomes of a claimed task whose start (fence bump, then RUNNING)
// failed, err. An operator's cancel, or a shutdown, ends it as before its start; a task that
// moved on in the store (another run took it, an operator ended it) is not this run's; any
// other failure (Redis away or slow past the lease's deadline) leaves the task PENDING as far
// as anybody knows, and it is handed back to its plan's queue (claimFailed), never dropped: a
// start that did reach Redis leaves it RUNNING, which its next claim skips and a reader
// judges.
func (o *Orchestrator) notStarted(run *taskRun, err error, at *slog.Logger) runEnd {
	cause := context.Cause(run.ctx)
	if run.ctx.Err() != nil && !errors.Is(cause, errLeaseLost) {
		return o.endUnstarted(run, at)
	}
	if errors.Is(err, errNotPending) || errors.Is(err, task.ErrFenced) || errors.Is(err, errRunOver) {
		at.Warn("task not started", "err", err)
		return endDone
	}
	at.Warn("task not started: handed back to its plan's queue", "err", err)
	return o.claimFailed(run.id, err)
}

// releaseLease gives the tenant's lease back once the run has written its end.
func (o *Orchestrator) releaseLease(run *taskRun, held lease.Lease, at *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(run.ctx), persistTimeout)
	defer cancel()
	if err := held.Release(ctx); err != nil {
		at.Warn("release tenant lease", "err", err)
	}
}

// resumePoint returns the checkpoint the run resumes from: empty at stage 0 (a stored one
// holds nothing to resume from), else the stored one, which must resume at the task's stage.
func (o *Orchestrator) resumePoint(run *taskRun) (*checkpoint.Checkpoint, error) {
	if run.cur().CurrentStage() == 0 {
		return checkpoint.New(run.id), nil
	}
	cp, err := o.ckpts.Checkpoint(run.ctx, run.id)
	if errors.Is(err, checkpoint.ErrNotFound) {
		cp, err = checkpoint.New(run.id), nil
	}
	if err == nil && cp.Next() != run.cur().CurrentStage() {
		err = fmt.Errorf("checkpoint resumes at stage %d, task at %d", cp.Next(), run.cur().CurrentStage())
	}
	return cp, err
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
	fresh, err := o.tasks.BumpFence(run.ctx, run.id)
	if err == nil {
		run.task.Store(fresh)
	}
	unlock()
	if err != nil {
		return 0, err
	}
	epoch := fresh.Fence()
	err = o.commit(run, nil, func(t *task.Task) error {
		if t.Status() != task.Pending {
			return fmt.Errorf("%w: it is %s in the store", errNotPending, t.Status())
		}
		return t.StartOn(epoch, o.cfg.Name, o.now())
	})
	if err != nil {
		return 0, err
	}
	unlock = o.taskLocks.lock(run.id)
	run.started = true
	unlock()
	return epoch, nil
}

// boundary honours, between two stages, a cancelled run, a clean stop or a requested pause.
func (o *Orchestrator) boundary(run *taskRun, next string, log *slog.Logger) (stop bool, end runEnd) {
	if run.selfFenced() { // before anything else: a process woken from a pause past its deadline
		run.cancel(errLeaseLost)
	}
	if run.ctx.Err() != nil {
		return true, ended(o.end(run, nil, o.causeFailure(run, next), false, log))
	}
	if o.draining.Load() {
		return true, o.stopForShutdown(run, next, log)
	}
	if err := o.refresh(run); err != nil { // a signal said an operator changed the task
		if errors.Is(err, errRunOver) {
			log.Info("run stopped: the task was ended by an operator", "status", run.cur().Status())
			return true, endDone
		}
		log.Error("read task again", "err", err)
		return true, endDone
	}
	paused := false
	err := o.commit(run, nil, func(t *task.Task) error {
		if !t.PauseRequested() {
			return errSkip
		}
		paused = true
		return t.Pause(o.now())
	})
	if errors.Is(err, errRunOver) {
		log.Info("run stopped: the task was ended by an operator", "status", run.cur().Status())
		return true, endDone
	}
	if err != nil && !errors.Is(err, errSkip) {
		log.Error("pause task", "err", err)
		return true, endDone
	}
	return paused, endDone
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
// INTERRUPTED when the lease or the executor went away, FAILED otherwise. inStage says that
// the run was inside a stage (an attempt, or the backoff before the next one), not at a
// boundary: when it is cut short there, the attempt it was cut in is recorded as interrupted
// (task.InterruptStage), its own entry when it has one. It reports FAILED.
func (o *Orchestrator) end(run *taskRun, entry *task.Attempt, f task.Failure, inStage bool, log *slog.Logger) (failed bool) {
	cause := context.Cause(run.ctx)
	if run.ctx.Err() != nil && errors.Is(cause, errFenced) {
		// The store keeps the other executor's state: this run has nothing left to write.
		log.Warn("run stopped: fenced", "class", stage.ClassFenced, "stage", f.Stage)
		return false
	}
	if o.cfg.Shared && run.ctx.Err() != nil && errors.Is(cause, errLeaseLost) {
		// Self-fenced (or the lease taken): the run may no longer hold the tenant, and writes
		// nothing more. The task stays RUNNING in the store until a reader judges its owner
		// gone (reap.go), which records the attempt that was underway as in doubt.
		log.Warn("run stopped: tenant lease lost; the task is left to be judged by a reader", "class", stage.ClassLeaseLost,
			"stage", f.Stage, "err", f.Message)
		return false
	}
	if run.cur().Status() != task.Running { // an operator ended it meanwhile: the store has its status
		log.Info("run stopped: the task was ended by an operator", "status", run.cur().Status())
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
		case run.ctx.Err() != nil && inStage:
			return t.InterruptStage(f, o.now())
		case run.ctx.Err() != nil:
			return t.Interrupt(f, o.now())
		default:
			failed = true
			return t.Fail(f, o.now())
		}
	})
	if errors.Is(err, errRunOver) {
		log.Info("run stopped: the task was ended by an operator", "status", run.cur().Status())
		return false
	}
	if err != nil {
		log.Error("end task", "class", f.Class, "err", err)
		return failed
	}
	level := slog.LevelWarn
	if errors.Is(cause, errCancelRequested) {
		level = slog.LevelInfo
	}
	log.Log(context.Background(), level, "task ended", "status", run.cur().Status(), "class", f.Class, "stage_attempt", f.Attempt, "err", f.Message)
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
				if err != nil && !errors.Is(err, task.ErrInvalidTransition) && !errors.Is(err, errRunOver) {
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
