package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
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
	o        *core // the orchestrator it runs in
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
	unwatch  func() bool               // stops the lease's loss from cancelling the run (takeLease)
}

// heldLease is the lease a run holds.
type heldLease struct{ lease.Lease }

// deadline is the run's lease deadline (lease.Lease.Deadline): zero before the lease is taken,
// or when it does not self-fence.
func (run *taskRun) deadline() time.Time {
	if h := run.held.Load(); h != nil {
		return h.Deadline()
	}
	return time.Time{}
}

// selfFenced reports whether the run's self-fencing lease has passed its deadline: the run
// must stop before anything else, and write nothing more (another executor may have judged
// its owner gone, and taken the tenant).
func (run *taskRun) selfFenced() bool { return !lease.Valid(run.deadline(), time.Now()) }

// holds reports whether the run's lease still holds (the opposite of selfFenced).
func (run *taskRun) holds() bool { return !run.selfFenced() }

// cur returns the run's copy of its task. A copy is never changed once the run holds it: a
// write applies its change to a clone and sets that once the store took it (commitAs), a read
// sets the task as read (reload), so the run's goroutine reads it while its heartbeat writes.
func (run *taskRun) cur() *task.Task { return run.task.Load() }

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

// takeLease takes the tenant's lease for the run and watches it: its loss cancels the run.
// When it is not taken (nil) the task has ended (endFailed: FAILED, class tenant_locked when
// another run holds the tenant), or the run was cancelled before it started.
func (run *taskRun) takeLease(at *slog.Logger) (lease.Lease, runEnd) {
	held, err := run.o.locker.Acquire(run.ctx, run.tenantID, leaseOwner(run.o.cfg.Name, run.planID, run.id))
	if err != nil {
		if run.ctx.Err() != nil {
			return nil, run.endUnstarted(at)
		}
		if run.o.cfg.Shared && (!errors.Is(err, lease.ErrHeld) || run.heldByItself()) {
			// Redis away: nothing proves the tenant free, and nothing was started; the task
			// goes back to its plan's queue, PENDING, to run once Redis answers. So does a
			// task whose tenant is held by a lease of its own earlier run (one that stopped
			// before its start reached Redis): that key expires by itself.
			return nil, run.o.claimFailed(run.id, err)
		}
		class := stage.ClassRetryable
		if errors.Is(err, lease.ErrHeld) {
			class = stage.ClassTenantLocked
			run.o.cfg.Metrics.LeaseContended()
		}
		f := task.Failure{Class: class, Message: err.Error()}
		err = run.commit(nil, func(t *task.Task) error {
			if err := t.Start(t.Fence(), run.o.now()); err != nil {
				return err
			}
			return t.Fail(f, run.o.now())
		})
		at.Warn("task failed: tenant lease not taken", "class", class, "err", f.Message, "save_err", err)
		return nil, endFailed
	}
	run.held.Store(&heldLease{held})
	// Its loss cancels the run: a func the lease runs then, not a goroutine per run waiting
	// for it (releaseLease stops it).
	run.unwatch = held.AfterLost(func() {
		run.o.cfg.Metrics.LeaseLost()
		run.cancel(errLeaseLost)
	})
	return held, endDone
}

// heldByItself reports whether the tenant's lease is held by a run of the run's own task.
func (run *taskRun) heldByItself() bool {
	h, held, err := run.o.locker.Holder(run.ctx, run.tenantID)
	return err == nil && held && ownsTask(h.Owner, run.planID, run.id)
}

// notStarted decides what becomes of a claimed task whose start (fence bump, then RUNNING)
// failed, err. An operator's cancel, or a shutdown, ends it as before its start; a task that
// moved on in the store (another run took it, an operator ended it) is not this run's; any
// other failure (Redis away or slow past the lease's deadline) leaves the task PENDING as far
// as anybody knows, and it is handed back to its plan's queue (claimFailed), never dropped: a
// start that did reach Redis leaves it RUNNING, which its next claim skips and a reader
// judges.
func (run *taskRun) notStarted(err error, at *slog.Logger) runEnd {
	cause := context.Cause(run.ctx)
	if run.ctx.Err() != nil && !errors.Is(cause, errLeaseLost) {
		return run.endUnstarted(at)
	}
	if errors.Is(err, errNotPending) || errors.Is(err, task.ErrFenced) || errors.Is(err, errRunOver) {
		at.Warn("task not started", "err", err)
		return endDone
	}
	at.Warn("task not started: handed back to its plan's queue", "err", err)
	return run.o.claimFailed(run.id, err)
}

// releaseLease gives the tenant's lease back once the run has written its end.
func (run *taskRun) releaseLease(held lease.Lease, at *slog.Logger) {
	run.unwatch()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(run.ctx), persistTimeout)
	defer cancel()
	if err := held.Release(ctx); err != nil {
		at.Warn("release tenant lease", "err", err)
	}
}

// resumePoint returns the checkpoint the run resumes from: empty at stage 0 of a task's first
// run (nothing stored can hold anything to resume from), else the stored one, which must
// resume at the task's stage: a retry at stage 0 reads it too, for the progress the stage
// saved in an earlier run (an http poll's first response).
func (run *taskRun) resumePoint() (*checkpoint.Checkpoint, error) {
	if run.cur().CurrentStage() == 0 && run.attempt <= 1 {
		return checkpoint.New(run.id), nil
	}
	cp, err := run.o.ckpts.Checkpoint(run.ctx, run.id)
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
func (run *taskRun) start() (uint64, error) {
	unlock := run.o.taskLocks.lock(run.id)
	fresh, err := run.o.tasks.BumpFence(run.ctx, run.id)
	if err == nil {
		run.task.Store(fresh)
	}
	unlock()
	if err != nil {
		return 0, err
	}
	epoch := fresh.Fence()
	err = run.commit(nil, func(t *task.Task) error {
		if t.Status() != task.Pending {
			return fmt.Errorf("%w: it is %s in the store", errNotPending, t.Status())
		}
		return t.StartOn(epoch, run.o.cfg.Name, run.o.now())
	})
	if err != nil {
		return 0, err
	}
	unlock = run.o.taskLocks.lock(run.id)
	run.started = true
	unlock()
	return epoch, nil
}

// boundary honours, between two stages, a cancelled run, a clean stop or a requested pause.
func (run *taskRun) boundary(next string, log *slog.Logger) (stop bool, end runEnd) {
	if run.selfFenced() { // before anything else: a process woken from a pause past its deadline
		run.cancel(errLeaseLost)
	}
	if run.ctx.Err() != nil {
		return true, ended(run.end(nil, run.causeFailure(next), false, log))
	}
	if run.o.draining.Load() {
		return true, run.stopForShutdown(next, log)
	}
	if err := run.refresh(); err != nil { // a signal said an operator changed the task
		if errors.Is(err, errRunOver) {
			log.Info("run stopped: the task was ended by an operator", "status", run.cur().Status())
			return true, endDone
		}
		log.Error("read task again", "err", err)
		return true, endDone
	}
	paused := false
	err := run.commit(nil, func(t *task.Task) error {
		if t.RollbackRequested() { // the run goes on, undoing (runStages)
			return t.TurnBack(nil, run.o.now())
		}
		if !t.PauseRequested() {
			return errSkip
		}
		paused = true
		return t.Pause(run.o.now())
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
func (run *taskRun) causeFailure(stageName string) task.Failure {
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
func (run *taskRun) end(entry *task.Attempt, f task.Failure, inStage bool, log *slog.Logger) (failed bool) {
	cause := context.Cause(run.ctx)
	if run.ctx.Err() != nil && errors.Is(cause, errFenced) {
		// The store keeps the other executor's state: this run has nothing left to write.
		log.Warn("run stopped: fenced", "class", stage.ClassFenced, "stage", f.Stage)
		return false
	}
	if run.o.cfg.Shared && run.ctx.Err() != nil && errors.Is(cause, errLeaseLost) {
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
	err := run.commit(nil, func(t *task.Task) error {
		if entry != nil {
			if err := t.Record(*entry); err != nil {
				return err
			}
		}
		switch {
		case run.ctx.Err() != nil && errors.Is(cause, errCancelRequested):
			return t.Cancel(&f, run.o.now())
		case run.ctx.Err() != nil && inStage:
			return t.InterruptStage(f, run.o.now())
		case run.ctx.Err() != nil:
			return t.Interrupt(f, run.o.now())
		case t.RollbackRequested(): // asked while the stage ran: it turns back, not ends
			return t.TurnBack(&f, run.o.now())
		default:
			failed = true
			return t.Fail(f, run.o.now())
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

// heartbeat records, every LeaseTTL/3 while the run lasts, that its owner is alive, so that
// long stages are not mistaken for a dead owner: a timer, not a goroutine per run; each beat
// writes on the timer's goroutine, one at a time (a tick while one writes is skipped), so a
// slow write never delays the run nor the loss of its lease. It returns a func that stops the
// beats and waits for the one in flight.
func (run *taskRun) heartbeat(log *slog.Logger) (stop func()) {
	b := &beats{every: run.o.cfg.LeaseTTL / 3}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.timer = time.AfterFunc(b.every, func() { b.tick(run, log) })
	return b.stop
}

// beats are the heartbeats of one run (heartbeat).
type beats struct {
	every    time.Duration
	mu       sync.Mutex
	timer    *time.Timer
	stopped  bool
	inFlight chan struct{} // closed when the beat writing ends; nil when none writes
}

// tick writes one beat unless one is in flight, the beats stopped, or the run's context ended,
// and arms the next.
func (b *beats) tick(run *taskRun, log *slog.Logger) {
	b.mu.Lock()
	if b.stopped || run.ctx.Err() != nil {
		b.mu.Unlock()
		return
	}
	b.timer.Reset(b.every)
	if b.inFlight != nil {
		b.mu.Unlock()
		return
	}
	done := make(chan struct{})
	b.inFlight = done
	b.mu.Unlock()
	run.beat(log)
	b.mu.Lock()
	b.inFlight = nil
	b.mu.Unlock()
	close(done)
}

// stop stops the beats and waits for the one in flight.
func (b *beats) stop() {
	b.mu.Lock()
	b.stopped = true
	b.timer.Stop()
	done := b.inFlight
	b.mu.Unlock()
	if done != nil {
		<-done
	}
}

// beat writes one heartbeat.
func (run *taskRun) beat(log *slog.Logger) {
	err := run.commitAs(nil, func(t *task.Task) error { return t.Beat(run.o.now()) }, run.o.tasks.Save)
	if err != nil && !errors.Is(err, task.ErrInvalidTransition) && !errors.Is(err, errRunOver) {
		log.Warn("heartbeat", "err", err)
	}
}
