package orchestrator

import (
	"errors"
	"log/slog"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// runStages runs the started task's stages from cp on, each after its boundary (a cancel, a
// pause, a shutdown), and reports how the run ended.
func (run *taskRun) runStages(ph *planHere, cp *checkpoint.Checkpoint, epoch uint64, log *slog.Logger) runEnd {
	if run.cur().RollingBack() {
		return run.runUndos(ph, cp, epoch, log)
	}
	stages := run.cur().Stages()
	resumedDone := cp.Next() >= len(stages) // a checkpoint with every stage done: only Complete is left
	for i := cp.Next(); i < len(stages); i++ {
		stageLog := log.With("stage", stages[i].Name)
		if stop, end := run.boundary(stages[i].Name, stageLog); stop {
			return end
		}
		if run.cur().RollingBack() { // an operator's rollback, honoured at the boundary
			return run.undoFromHere(ph, cp, epoch, endDone, log)
		}
		res := run.runStage(ph, i, false, cp, stageLog)
		switch {
		case res.wait != nil:
			run.park(res.wait, stageLog)
			return endDone
		case res.failure != nil && ph.onFailure == plan.OnFailureRollback && run.ctx.Err() == nil:
			if !run.turnBack(res.entry, *res.failure, stageLog) {
				return endDone
			}
			if end := run.runUndos(ph, cp, epoch, log); end != endDone {
				return end
			}
			return endFailed // the stage failed: a failure budget counts it, rolled back or not
		case res.failure != nil:
			end := ended(run.end(res.entry, *res.failure, true, stageLog))
			if t := run.cur(); t.Status() == task.Running && t.RollingBack() { // a rollback was asked meanwhile
				return run.undoFromHere(ph, cp, epoch, endFailed, log)
			}
			return end
		}
		if !run.completeStage(i, cp, res, epoch, stageLog) {
			return endDone
		}
		if run.cur().RollingBack() { // its last stage completed as a rollback was asked
			return run.undoFromHere(ph, cp, epoch, endDone, log)
		}
	}
	last := log.With("stage", stages[len(stages)-1].Name)
	if resumedDone {
		if err := run.commit(nil, func(t *task.Task) error {
			if t.RollbackRequested() {
				return t.TurnBack(nil, run.o.now())
			}
			return t.Complete(run.o.now())
		}); err != nil {
			last.Error("complete task", "err", err)
			return endDone
		}
		if run.cur().RollingBack() {
			return run.undoFromHere(ph, cp, epoch, endDone, log)
		}
	}
	last.Info("task completed")
	return endDone
}

// completeStage records stage i as completed with its output: the checkpoint, the ledger
// entry and the next stage in one write (the last stage's write also completes the task). It
// reports whether the run goes on.
func (run *taskRun) completeStage(i int, cp *checkpoint.Checkpoint, res stageResult, epoch uint64, log *slog.Logger) bool {
	last := i == len(run.cur().Stages())-1
	if err := cp.Record(i, res.entry.Stage, res.out, epoch, run.o.now()); err != nil {
		run.end(res.entry, task.Failure{Stage: res.entry.Stage, Class: stage.ClassPermanent, Message: "checkpoint: " + err.Error()}, true, log)
		return false
	}
	err := run.commit(cp, func(t *task.Task) error {
		if err := t.Record(*res.entry); err != nil {
			return err
		}
		if err := t.CompleteStage(i, run.o.now()); err != nil {
			return err
		}
		if last && t.RollbackRequested() {
			return t.TurnBack(nil, run.o.now())
		}
		if last {
			return t.Complete(run.o.now())
		}
		return nil
	})
	if errors.Is(err, errRunOver) {
		// An operator ended the task while the stage ran: the store keeps the operator's
		// status, and the stage's checkpoint, so that it never runs again unasked.
		if err := run.keepCheckpoint(cp); err != nil {
			log.Warn("keep the checkpoint of a stage completed after the task was ended", "err", err)
		}
		log.Info("run stopped: the task was ended by an operator", "status", run.cur().Status())
		return false
	}
	if err != nil {
		log.Error("save completed stage", "err", err)
		return false
	}
	log.Debug("stage completed", "stage_attempt", res.entry.Attempt, "duration_ms", res.entry.EndedAt.Sub(res.entry.StartedAt).Milliseconds())
	return true
}
