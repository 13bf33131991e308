package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// Failures recorded by a shutdown; a retry --from-checkpoint resumes each such task.
var (
	shutdownQueued   = task.Failure{Class: stage.ClassShutdown, Message: "the executor shut down before the task started"}
	shutdownBoundary = "the executor shut down: the task stopped at a stage boundary"
)

// Stop stops the orchestrator gracefully (docs/runbook.md, Shutdown):
//  1. no task starts here any more; retries and resumes are refused with errcode.ErrShuttingDown (the
//     app refuses new plans before they are created). On a shared Queue (Redis) the queued
//     tasks stay queued for the other executors (or the next one to start); on the in-memory
//     Queue they become INTERRUPTED at once, as do the tasks of a plan launched meanwhile;
//  2. running tasks go on until their next stage boundary, where, on a shared Queue, they are
//     handed back to the front of their plan's queue (PENDING, checkpoint intact: another
//     executor continues them at that stage); on the in-memory Queue they become INTERRUPTED
//     with their checkpoints intact (a task whose last stage ends meanwhile completes);
//  3. after Config.StopGrace (at once after CutShort, or when ctx ends), the stages still
//     running are cancelled and their tasks become INTERRUPTED (class shutdown: started work,
//     left to an operator), the checkpoint holding the last stage that completed; their slots
//     are freed and the rest of their plans go on.
//
// Every run releases its tenant's lease as it ends. Stop returns once every run has written
// its end, or when ctx ends. Plans keep their status: a plan is not settled by a stop. Stop
// may be called more than once (a later call waits for the runs again), and without Start.
func (o *Orchestrator) Stop(ctx context.Context) error {
	o.draining.Store(true)
	o.haltOnce.Do(func() { close(o.stopClaims) })
	if o.started.Load() {
		<-o.dispatcher.dispatched // no claim after this: the runs are all counted in wg
		<-o.recovery.reconciled
	}
	if !o.queue.Shared() {
		o.feeder.interruptAllQueued()
	}

	done := make(chan struct{})
	go func() { o.wg.Wait(); close(done) }()
	timer := time.NewTimer(o.cfg.StopGrace)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
	case <-o.cutShort:
	case <-ctx.Done():
	}
	o.stop(errShutdown) // the runs still going: cancel their stages
	select {
	case <-done:
		o.feeder.flushFallback()
		return nil
	case <-ctx.Done():
		return fmt.Errorf("orchestrator: stop: %w", ctx.Err())
	}
}

// CutShort ends Stop's grace (serve's second SIGTERM): the stages still running are
// cancelled now, as when Config.StopGrace runs out, or as soon as Stop begins when it has not
// yet. It does not wait: Stop returns once their runs have written their ends.
func (o *Orchestrator) CutShort() { o.cutOnce.Do(func() { close(o.cutShort) }) }

// flushFallback hands what the Fallback still holds (queued while Redis was away, or handed
// back by the runs that just stopped) to the shared Queue; what it cannot hand over dies with
// the process, so it becomes INTERRUPTED (an SRE retries it).
func (f *feeder) flushFallback() {
	if f.cfg.Fallback == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(f.ctx), persistTimeout)
	defer cancel()
	f.catchUp(ctx)
	plans, _ := f.cfg.Fallback.Plans(ctx)
	for _, planID := range plans {
		ids, _ := f.cfg.Fallback.Drain(ctx, planID)
		f.interruptQueued(ids)
	}
}

// ShuttingDown reports whether Stop has begun.
func (o *Orchestrator) ShuttingDown() bool { return o.draining.Load() }

// interruptAllQueued empties every plan's queue (in memory: it dies with the process) and
// interrupts what they held.
func (f *feeder) interruptAllQueued() {
	ctx := context.WithoutCancel(f.ctx)
	plans, err := f.queue.Plans(ctx)
	if err != nil {
		f.cfg.Logger.Error("list queued plans at shutdown", "err", err)
		return
	}
	for _, planID := range plans {
		ids, err := f.queue.Drain(ctx, planID)
		if err != nil {
			f.cfg.Logger.Error("empty a plan's queue at shutdown", "plan_id", planID, "err", err)
			continue
		}
		f.interruptQueued(ids)
	}
}

// interruptQueued records that tasks queued to start never will: PENDING → INTERRUPTED.
func (o *core) interruptQueued(ids []string) {
	ctx := context.WithoutCancel(o.ctx)
	for _, id := range ids {
		_, err := o.update(ctx, id, func(t *task.Task) (*checkpoint.Checkpoint, error) {
			if t.Status() != task.Pending {
				return nil, errSkip
			}
			return nil, t.Interrupt(shutdownQueued, o.now())
		})
		if err != nil && !errors.Is(err, errSkip) {
			o.cfg.Logger.Error("interrupt queued task", "task_id", id, "err", err)
		}
	}
}

// endUnstarted records how a run ended before its task started (the task is still PENDING):
// CANCELLED on an operator's cancel; when the executor is shutting down, handed back to its
// plan's queue on a shared Queue, else INTERRUPTED.
func (run *taskRun) endUnstarted(log *slog.Logger) runEnd {
	f := shutdownQueued
	cancelled := errors.Is(context.Cause(run.ctx), errCancelRequested)
	switch {
	case cancelled:
		f = operatorCancel
	case !run.o.draining.Load():
		return endDone
	case run.o.queue.Shared():
		return endHandedBack
	}
	err := run.commit(nil, func(t *task.Task) error {
		if t.Status() != task.Pending {
			return errSkip
		}
		if cancelled {
			return t.Cancel(&f, run.o.now())
		}
		return t.Interrupt(f, run.o.now())
	})
	if err != nil && !errors.Is(err, errSkip) {
		log.Error("end task before its start", "err", err)
	}
	return endDone
}

// stopForShutdown ends a run at a stage boundary because the executor is shutting down: on a
// shared Queue the task is handed back (PENDING, to the front of its plan's queue, for another
// executor to continue at stage next), else it becomes INTERRUPTED before stage next; its
// checkpoint intact either way. log names the stage.
func (run *taskRun) stopForShutdown(next string, log *slog.Logger) runEnd {
	if run.o.queue.Shared() {
		err := run.commit(nil, func(t *task.Task) error { return t.HandBack(run.o.now()) })
		if errors.Is(err, errRunOver) {
			log.Info("run stopped: the task was ended by an operator", "status", run.cur().Status())
			return endDone
		}
		if err != nil {
			log.Error("hand task back at shutdown", "err", err)
			return endDone
		}
		log.Info("task handed back to its plan's queue at a stage boundary: the executor is shutting down")
		return endHandedBack
	}
	f := task.Failure{Stage: next, Class: stage.ClassShutdown, Message: shutdownBoundary}
	if err := run.commit(nil, func(t *task.Task) error { return t.Interrupt(f, run.o.now()) }); err != nil {
		log.Error("interrupt task at shutdown", "err", err)
		return endDone
	}
	log.Info("task interrupted at a stage boundary: the executor is shutting down")
	return endDone
}
