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

// ErrShuttingDown: the orchestrator is shutting down and starts no more work (a new plan, a
// retry or a resume); the API answers 503.
var ErrShuttingDown = errors.New("orchestrator: the executor is shutting down")

// Failures recorded by a shutdown; a retry --from-checkpoint resumes each such task.
var (
	shutdownQueued   = task.Failure{Class: stage.ClassShutdown, Message: "the executor shut down before the task started"}
	shutdownBoundary = "the executor shut down: the task stopped at a stage boundary"
)

// Shutdown stops the orchestrator gracefully (docs/runbook.md, Shutdown):
//  1. no task starts any more: tasks queued to start become INTERRUPTED at once, as do the
//     tasks of a plan launched meanwhile; retries and resumes are refused with ErrShuttingDown
//     (the app refuses new plans before they are created);
//  2. running tasks go on until their next stage boundary, where they become INTERRUPTED with
//     their checkpoints intact (a task whose last stage ends meanwhile completes);
//  3. after grace, the stages still running are cancelled and their tasks become INTERRUPTED
//     too, the checkpoint holding the last stage that completed.
//
// Every run releases its tenant's lease as it ends. Shutdown returns once every run has
// written its end, or when ctx ends. Plans keep their status: a plan is not settled by a
// shutdown (retrying its tasks later finishes it).
func (o *Orchestrator) Shutdown(ctx context.Context, grace time.Duration) error {
	o.draining.Store(true)
	o.mu.Lock()
	runs := make([]*planRun, 0, len(o.runs))
	for _, pr := range o.runs {
		runs = append(runs, pr)
	}
	o.mu.Unlock()
	for _, pr := range runs {
		o.interruptQueued(pr.drain())
	}

	done := make(chan struct{})
	go func() { o.wg.Wait(); close(done) }()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
	case <-ctx.Done():
	}
	o.stop(errShutdown) // the runs still going: cancel their stages
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("orchestrator: shutdown: %w", ctx.Err())
	}
}

// Stop is Shutdown without grace: running stages are cancelled at once.
func (o *Orchestrator) Stop(ctx context.Context) error { return o.Shutdown(ctx, 0) }

// ShuttingDown reports whether Shutdown has begun.
func (o *Orchestrator) ShuttingDown() bool { return o.draining.Load() }

// interruptQueued records that tasks queued to start never will: PENDING → INTERRUPTED.
func (o *Orchestrator) interruptQueued(ids []string) {
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
// CANCELLED on an operator's cancel, INTERRUPTED when the executor is shutting down.
func (o *Orchestrator) endUnstarted(run *taskRun, log *slog.Logger) {
	f := shutdownQueued
	cancelled := errors.Is(context.Cause(run.ctx), errCancelRequested)
	if cancelled {
		f = operatorCancel
	} else if !o.draining.Load() {
		return
	}
	err := o.commit(run, nil, func(t *task.Task) error {
		if t.Status() != task.Pending {
			return errSkip
		}
		if cancelled {
			return t.Cancel(&f, o.now())
		}
		return t.Interrupt(f, o.now())
	})
	if err != nil && !errors.Is(err, errSkip) {
		log.Error("end task before its start", "err", err)
	}
}

// stopForShutdown ends a run at a stage boundary because the executor is shutting down: the
// task becomes INTERRUPTED before stage next, its checkpoint intact. log names the stage.
func (o *Orchestrator) stopForShutdown(run *taskRun, next string, log *slog.Logger) {
	f := task.Failure{Stage: next, Class: stage.ClassShutdown, Message: shutdownBoundary}
	if err := o.commit(run, nil, func(t *task.Task) error { return t.Interrupt(f, o.now()) }); err != nil {
		log.Error("interrupt task at shutdown", "err", err)
		return
	}
	log.Info("task interrupted at a stage boundary: the executor is shutting down")
}
