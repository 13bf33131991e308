package orchestrator

import (
	"time"

	"context"
	"errors"
	"fmt"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/errcode"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// operatorCancel is the last error of a task an operator cancelled before it ran.
var operatorCancel = task.Failure{Class: stage.ClassCancelled, Message: errCancelRequested.Error()}

// PausePlan stops new task starts and asks the plan's running tasks to pause at their next
// stage boundary, wherever they run: the plan is PAUSED by a compare-and-set, every executor
// is signalled to stop starting its tasks, and each RUNNING task gets a pause request (its
// run learns of it at its next write, or at once from the signal).
func (ctl *control) PausePlan(ctx context.Context, planID string) error {
	unlock := ctl.planLocks.lock(planID)
	defer unlock()
	p, err := ctl.updatePlan(ctx, planID, func(p *plan.Plan) error { return p.Pause(ctl.now()) })
	if err != nil {
		return err
	}
	ctl.feeder.setPaused(ctx, planID, true)
	ctl.pauseHere(ctx, planID)
	ctl.signal(ctx, sigPlan, planID)
	statuses, err := ctl.statusesOf(ctx, p.TaskIDs())
	if err != nil {
		return fmt.Errorf("orchestrator: pause plan %s: %w", planID, err)
	}
	for i, st := range statuses {
		if st != task.Running {
			continue
		}
		id := p.TaskIDs()[i]
		_, err := ctl.update(ctx, id, func(t *task.Task) (*checkpoint.Checkpoint, error) {
			if t.Status() != task.Running || t.PauseRequested() {
				return nil, errSkip
			}
			return nil, t.RequestPlanPause(ctl.now())
		})
		if err != nil && !errors.Is(err, errSkip) {
			return err
		}
		if err == nil {
			ctl.signal(ctx, sigPause, id)
		}
	}
	return nil
}

// resumable reads, of the tasks ids, those whose status a resume may change (PAUSED, and
// PENDING or RUNNING ones with a pause requested): their statuses first, then those tasks
// whole. An ended task is not read: a store may no longer hold it whole (the Redis store's
// mirror while Redis is away keeps only a bounded cache of ended tasks).
func (ctl *control) resumable(ctx context.Context, ids []string) ([]*task.Task, error) {
	statuses, err := ctl.statusesOf(ctx, ids)
	if err != nil {
		return nil, err
	}
	var some []string
	for i, st := range statuses {
		if st == task.Paused || st == task.Pending || st == task.Running {
			some = append(some, ids[i])
		}
	}
	if len(some) == 0 {
		return nil, nil
	}
	return ctl.tasks.ByIDs(ctx, some)
}

// ResumePlan lets a paused plan's tasks start again and resumes the tasks its pause paused
// at their next stage; with all, the tasks paused one by one too (task.Task.PausedByPlan), and
// a RUNNING plan's too (a resume --all after a plain resume). A plan whose tasks have all
// ended is settled.
func (ctl *control) ResumePlan(ctx context.Context, planID string, all bool) error {
	if ctl.draining.Load() {
		return errcode.ErrShuttingDown
	}
	unlock := ctl.planLocks.lock(planID)
	defer unlock()
	p, err := ctl.updatePlan(ctx, planID, func(p *plan.Plan) error {
		if all && p.Status() == plan.Running {
			return errSkip // resumed before: --all still resumes its tenants paused one by one
		}
		return p.Resume()
	})
	if errors.Is(err, errSkip) {
		p, err = ctl.plans.Plan(ctx, planID)
	}
	if err != nil {
		return err
	}
	ctl.feeder.setPaused(ctx, planID, false)
	ctl.signal(ctx, sigPlan, planID)
	tasks, err := ctl.resumable(ctx, p.TaskIDs())
	if err != nil {
		return fmt.Errorf("orchestrator: resume plan %s: %w", planID, err)
	}
	var resumed []string
	for _, t := range tasks {
		if (t.Status() != task.Paused && !t.PauseRequested()) || (!all && !t.PausedByPlan()) {
			continue
		}
		was := task.Status("")
		_, err := ctl.update(ctx, t.ID(), func(t *task.Task) (*checkpoint.Checkpoint, error) {
			if was = t.Status(); !all && !t.PausedByPlan() {
				return nil, errSkip // paused for its tenant meanwhile
			}
			return nil, t.Resume(ctl.now())
		})
		if err != nil && !errors.Is(err, task.ErrInvalidTransition) && !errors.Is(err, errSkip) {
			return err
		}
		if err == nil && was == task.Paused {
			resumed = append(resumed, t.ID())
		}
	}
	ctl.feeder.push(ctx, p, resumed)
	// Every task may have ended while the plan was paused for a lost executor (an operator
	// cancelled the interrupted ones): nothing will run, and nothing else would settle it.
	ctl.settler.settleHeld(planID)
	return nil
}

// CancelPlan ends the plan: every task that has not ended is CANCELLED by a compare-and-set,
// wherever it runs, and every executor is signalled to stop its runs of the plan at once. It
// returns once the running ones have stopped (or ctx ended), so a CANCELLED plan has no
// RUNNING task.
func (ctl *control) CancelPlan(ctx context.Context, planID string) error {
	unlock := ctl.planLocks.lock(planID)
	defer unlock()
	p, err := ctl.plans.Plan(ctx, planID)
	if err != nil {
		return err
	}
	if p.Status().Terminal() {
		return p.Cancel(ctl.now()) // the typed refusal
	}
	ctl.unschedule(ctx, p)
	ctl.feeder.unqueue(ctx, planID, nil)
	statuses, err := ctl.statusesOf(ctx, p.TaskIDs())
	if err != nil {
		return err
	}
	var running []*task.Task
	for i, st := range statuses {
		if st.Terminal() || st == statusMissing {
			continue
		}
		was := task.Status("")
		t, err := ctl.update(ctx, p.TaskIDs()[i], func(t *task.Task) (*checkpoint.Checkpoint, error) {
			if was = t.Status(); was.Terminal() {
				return nil, errSkip
			}
			return nil, t.Cancel(&operatorCancel, ctl.now())
		})
		if errors.Is(err, errSkip) {
			continue
		}
		if err != nil {
			return err
		}
		if run := ctl.local(t.ID()); run != nil {
			run.cancel(errCancelRequested)
			running = append(running, t)
		} else if was == task.Running {
			ctl.signal(ctx, sigCancel, t.ID()) // its executor stops it now, not at its next write
			running = append(running, t)
		}
	}
	ctl.signal(ctx, sigPlan, planID)
	for _, t := range running {
		ctl.awaitStopped(ctx, t)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	_, err = ctl.updatePlan(ctx, planID, func(p *plan.Plan) error {
		if p.Status().Terminal() {
			return errSkip // settled meanwhile, from its cancelled tasks (maybe by another executor)
		}
		return p.Cancel(ctl.now())
	})
	if errors.Is(err, errSkip) {
		return nil
	}
	return err
}

// PauseTask asks a task to pause at its next stage boundary, wherever it runs.
func (ctl *control) PauseTask(ctx context.Context, taskID string) error {
	t, err := ctl.update(ctx, taskID, func(t *task.Task) (*checkpoint.Checkpoint, error) {
		return nil, t.RequestPause(ctl.now())
	})
	if err != nil {
		return err
	}
	if t.Status() == task.Running || t.Status() == task.Pending {
		if run := ctl.local(taskID); run != nil {
			run.recheck.Store(true)
		} else {
			ctl.signal(ctx, sigPause, taskID)
		}
	}
	return nil
}

// ResumeTask continues a paused task at its next stage, or withdraws a pending pause request.
func (ctl *control) ResumeTask(ctx context.Context, taskID string) error {
	return ctl.requeue(ctx, taskID, func(t *task.Task, _ *checkpoint.Checkpoint) (*checkpoint.Checkpoint, error) {
		return nil, t.Resume(ctl.now())
	})
}

// RetryTask runs a FAILED, CANCELLED, PAUSED or INTERRUPTED task again as a new attempt: from
// the stage after its checkpoint, or from stage 0 (forgetting the checkpoint). A finished plan
// is reopened. Of concurrent retries of one task (through any executors) exactly one wins;
// the others find it PENDING and are refused (task.ErrInvalidTransition).
func (ctl *control) RetryTask(ctx context.Context, taskID string, fromCheckpoint bool) error {
	return ctl.requeue(ctx, taskID, func(t *task.Task, cp *checkpoint.Checkpoint) (*checkpoint.Checkpoint, error) {
		// A rollback goes on from the stages still applied: from the start, it would take
		// them for undone.
		if fromCheckpoint || (t.RollingBack() && t.Status() != task.RolledBack) {
			return nil, t.Retry(cp.Next(), ctl.now())
		}
		if err := t.Retry(0, ctl.now()); err != nil {
			return nil, err
		}
		reset := cp.Clone()
		reset.Reset(t.Fence(), ctl.now())
		return reset, nil
	})
}

// RollbackTask rolls a task back (task.Task.Rollback): a new run that undoes the stages its
// checkpoint holds completed, newest first; a task that was rolling back goes on from the
// stages still applied. A finished plan is reopened. It never starts while another run holds
// the task: a RUNNING task is asked to roll back, which its own run does at its next stage
// boundary or as its stage ends (it holds the tenant); a WAITING one is refused.
func (ctl *control) RollbackTask(ctx context.Context, taskID string) error {
	requested := false // the task RUNS: its run is asked to turn back
	planID := ""
	err := ctl.requeue(ctx, taskID, func(t *task.Task, _ *checkpoint.Checkpoint) (*checkpoint.Checkpoint, error) {
		requested, planID = t.Status() == task.Running, t.PlanID()
		return nil, t.Rollback(ctl.now())
	})
	if err != nil {
		return err
	}
	ctl.cfg.Metrics.RollbackStarted(TriggerOperator)
	ctl.noteOnce(ctx, planID, "rollback:"+TriggerOperator, func(p *plan.Plan, now time.Time) bool {
		return p.NoteOnce(plan.EventRollbackStarted, TriggerOperator, now)
	})
	if !requested { // queued: a new run
		return nil
	}
	// Its run, here or on another executor, reads the task again at its next boundary (and
	// sees the request at its next write in any case: every write is a compare-and-set).
	if run := ctl.local(taskID); run != nil {
		run.recheck.Store(true)
	} else {
		ctl.signal(ctx, sigPause, taskID)
	}
	return nil
}

// CancelTask ends a task for good, by a compare-and-set, wherever it runs: its run (here or on
// another executor) is stopped at once. CancelTask returns once the run has stopped, or when
// ctx ends.
func (ctl *control) CancelTask(ctx context.Context, taskID string) error {
	was := task.Status("")
	t, err := ctl.update(ctx, taskID, func(t *task.Task) (*checkpoint.Checkpoint, error) {
		was = t.Status()
		return nil, t.Cancel(&operatorCancel, ctl.now())
	})
	if err != nil {
		return err
	}
	if was == task.Pending {
		ctl.feeder.unqueue(ctx, t.PlanID(), []string{taskID})
	}
	if run := ctl.local(taskID); run != nil {
		run.cancel(errCancelRequested)
		ctl.awaitStopped(ctx, t)
	} else if was == task.Running {
		ctl.signal(ctx, sigCancel, taskID)
		ctl.awaitStopped(ctx, t)
	}
	ctl.settler.settle(t.PlanID())
	return nil
}

// activeIn lists the tasks of planID this process is running.
func (o *core) activeIn(planID string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var ids []string
	for id, r := range o.active {
		if r.planID == planID {
			ids = append(ids, id)
		}
	}
	return ids
}

// Fenced stops this executor's run of taskID, if any, because another executor took the task
// (or its tenant) while Redis was away: the run ends with class fenced and writes nothing more.
func (o *Orchestrator) Fenced(taskID string) {
	if run := o.local(taskID); run != nil {
		run.cancel(errFenced)
	}
}
