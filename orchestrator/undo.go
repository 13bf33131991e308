package orchestrator

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// runUndos runs a rollback: the undos of the stages cp holds completed, newest first, each
// after its boundary (a cancel, a pause, a shutdown), each checkpointed with the task as the
// stage it undid (a stage without an undo is passed over in a write of its own); the last
// write ends the task ROLLED_BACK. An undo that fails ends it ROLLBACK_FAILED.
func (run *taskRun) runUndos(ph *planHere, cp *checkpoint.Checkpoint, epoch uint64, log *slog.Logger) runEnd {
	stages := run.cur().Stages()
	if cp.Next() == 0 { // nothing applied: rolled back as it starts
		if err := run.commit(nil, func(t *task.Task) error { return t.RolledBack(run.o.now()) }); err != nil {
			log.Error("end the rollback", "err", err)
		}
		return endDone
	}
	for i := cp.Next() - 1; i >= 0; i-- {
		name := stages[i].Name
		stageLog := log.With("stage", name, "undo", true)
		if stop, end := run.boundary(stage.UndoPrefix+name, stageLog); stop {
			return end
		}
		var res stageResult
		if stages[i].Undo != nil {
			res = run.runStage(ph, i, true, cp, stageLog)
			switch {
			case res.wait != nil:
				run.park(res.wait, stageLog)
				return endDone
			case res.failure != nil:
				return ended(run.end(res.entry, *res.failure, true, stageLog))
			}
		}
		if !run.undoStage(i, cp, res.entry, epoch, stageLog) {
			return endDone
		}
	}
	log.Info("task rolled back")
	return endDone
}

// undoFromHere runs the undos of a run that turned back in a write of its own (an operator's
// rollback, honoured at a boundary or as a stage ended): the run's number is the new one. It
// answers the rollback's end, or done when the rollback ended well (endFailed: the stage that
// ended failed, which a failure budget counts).
func (run *taskRun) undoFromHere(ph *planHere, cp *checkpoint.Checkpoint, epoch uint64, done runEnd, log *slog.Logger) runEnd {
	run.attempt = run.cur().Attempt()
	log.Info("rolling the task back, as an operator asked", "run", run.attempt)
	if end := run.runUndos(ph, cp, epoch, log); end != endDone {
		return end
	}
	return done
}

// undoStage records stage i as undone (entry: its undo's last attempt, nil for a stage
// without one): the checkpoint without it, the ledger entry and the stage count in one write
// (the write of stage 0 also ends the rollback). It reports whether the run goes on.
func (run *taskRun) undoStage(i int, cp *checkpoint.Checkpoint, entry *task.Attempt, epoch uint64, log *slog.Logger) bool {
	if err := cp.Undo(i, run.cur().Stages()[i].Name, epoch, run.o.now()); err != nil {
		run.end(entry, task.Failure{Stage: stage.UndoPrefix + run.cur().Stages()[i].Name, Class: stage.ClassPermanent, Message: "checkpoint: " + err.Error()}, true, log)
		return false
	}
	err := run.commit(cp, func(t *task.Task) error {
		if entry != nil {
			if err := t.Record(*entry); err != nil {
				return err
			}
		}
		if err := t.UndoStage(i, run.o.now()); err != nil {
			return err
		}
		if i == 0 {
			return t.RolledBack(run.o.now())
		}
		return nil
	})
	if errors.Is(err, errRunOver) {
		// An operator ended the task while the undo ran: the store keeps the operator's
		// status, and the checkpoint without the stage, so that the undo never runs again unasked.
		if err := run.keepCheckpoint(cp); err != nil {
			log.Warn("keep the checkpoint of an undo completed after the task was ended", "err", err)
		}
		log.Info("run stopped: the task was ended by an operator", "status", run.cur().Status())
		return false
	}
	if err != nil {
		log.Error("save undone stage", "err", err)
		return false
	}
	if entry != nil {
		log.Debug("stage undone", "stage_attempt", entry.Attempt, "duration_ms", entry.EndedAt.Sub(entry.StartedAt).Milliseconds())
	}
	return true
}

// turnBack turns the run, whose forward stage failed with f (entry: its last attempt), into a
// rollback in one write (the plan's onFailure is rollback): a new run, under the same lease.
// It reports whether the run goes on.
func (run *taskRun) turnBack(entry *task.Attempt, f task.Failure, log *slog.Logger) bool {
	err := run.commit(nil, func(t *task.Task) error {
		if entry != nil {
			if err := t.Record(*entry); err != nil {
				return err
			}
		}
		return t.TurnBack(&f, run.o.now())
	})
	if errors.Is(err, errRunOver) {
		log.Info("run stopped: the task was ended by an operator", "status", run.cur().Status())
		return false
	}
	if err != nil {
		log.Error("turn the run back", "err", err)
		return false
	}
	run.attempt = run.cur().Attempt()
	run.o.cfg.Metrics.RollbackStarted(TriggerOnFailure)
	run.o.noteOnce(run.ctx, run.planID, "rollback:"+TriggerOnFailure, func(p *plan.Plan, now time.Time) bool {
		return p.NoteOnce(plan.EventRollbackStarted, TriggerOnFailure, now)
	})
	log.Warn("stage failed; rolling the task back", "class", f.Class, "err", f.Message, "run", run.attempt)
	return true
}

// pauseOnFailure pauses the plan of task id, which just failed (its plan's onFailure is
// pause).
func (d *dispatcher) pauseOnFailure(planID, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(d.ctx), persistTimeout)
	defer cancel()
	err := d.control.PausePlan(ctx, planID)
	if err != nil && !errors.Is(err, errSkip) {
		d.cfg.Logger.Warn("pause the plan of a failed task (onFailure: pause)", "plan_id", planID, "task_id", id, "err", err)
		return
	}
	d.cfg.Logger.Info("plan paused: a task failed (onFailure: pause)", "plan_id", planID, "task_id", id)
}
