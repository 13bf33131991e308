package orchestrator

import (
	"context"
	"errors"
	"fmt"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// operatorCancel is the last error of a task an operator cancelled before it ran.
var operatorCancel = task.Failure{Class: stage.ClassCancelled, Message: errCancelRequested.Error()}

// PausePlan stops new task starts and asks the plan's running tasks to pause at their next
// stage boundary.
func (o *Orchestrator) PausePlan(ctx context.Context, planID string) error {
	unlock := o.planLocks.lock(planID)
	defer unlock()
	if _, err := o.changePlan(ctx, planID, (*plan.Plan).Pause); err != nil {
		return err
	}
	if pr := o.run(planID); pr != nil {
		pr.setPaused(true)
	}
	for _, id := range o.activeIn(planID) {
		err := o.withTask(ctx, id, func(t *task.Task, _ *taskRun) (*checkpoint.Checkpoint, error) {
			if t.Status() != task.Running && t.Status() != task.Pending {
				return nil, errSkip // a task just claimed is still PENDING while it takes its lease
			}
			return nil, t.RequestPause(o.now())
		})
		if err != nil && !errors.Is(err, errSkip) {
			return err
		}
	}
	return nil
}

// ResumePlan lets a paused plan's tasks start again and resumes its paused tasks at their next
// stage.
func (o *Orchestrator) ResumePlan(ctx context.Context, planID string) error {
	if o.draining.Load() {
		return ErrShuttingDown
	}
	unlock := o.planLocks.lock(planID)
	defer unlock()
	p, err := o.changePlan(ctx, planID, (*plan.Plan).Resume)
	if err != nil {
		return err
	}
	if pr := o.run(planID); pr != nil {
		pr.setPaused(false)
	}
	tasks, err := o.tasks.ByIDs(ctx, p.TaskIDs())
	if err != nil {
		return fmt.Errorf("orchestrator: resume plan %s: %w", planID, err)
	}
	var resumed []string
	for _, t := range tasks {
		if t.Status() != task.Paused && !t.PauseRequested() {
			continue
		}
		err := o.withTask(ctx, t.ID(), func(t *task.Task, _ *taskRun) (*checkpoint.Checkpoint, error) {
			if t.Status() == task.Paused {
				resumed = append(resumed, t.ID())
			}
			return nil, t.Resume(o.now())
		})
		if err != nil && !errors.Is(err, task.ErrInvalidTransition) {
			return err
		}
	}
	if len(resumed) > 0 {
		o.enqueue(p, resumed)
	}
	return nil
}

// CancelPlan ends the plan: queued, paused and interrupted tasks are cancelled, running ones
// are cancelled through their context. It returns once the running ones have recorded their
// cancellation (or ctx ended), so a CANCELLED plan has no RUNNING task.
func (o *Orchestrator) CancelPlan(ctx context.Context, planID string) error {
	unlock := o.planLocks.lock(planID)
	defer unlock()
	p, err := o.plans.Plan(ctx, planID)
	if err != nil {
		return err
	}
	if p.Status().Terminal() {
		return p.Cancel(o.now()) // the typed refusal
	}
	o.unschedule(ctx, p)
	if pr := o.run(planID); pr != nil {
		pr.drain()
	}
	stopping := map[string]<-chan struct{}{}
	cancel := func(id string) error {
		err := o.withTask(ctx, id, func(t *task.Task, run *taskRun) (*checkpoint.Checkpoint, error) {
			if run != nil {
				run.cancel(errCancelRequested)
				stopping[id] = run.done
				return nil, errSkip
			}
			if t.Status().Terminal() {
				return nil, errSkip
			}
			return nil, t.Cancel(&operatorCancel, o.now())
		})
		if err != nil && !errors.Is(err, errSkip) {
			return err
		}
		return nil
	}
	for _, id := range p.TaskIDs() {
		if err := cancel(id); err != nil {
			return err
		}
	}
	for id, done := range stopping {
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
		// A run that ended without recording the cancel (it had just parked its task at a
		// gate) leaves the task to cancel here.
		delete(stopping, id)
		if err := cancel(id); err != nil {
			return err
		}
	}
	_, err = o.changePlan(ctx, planID, func(p *plan.Plan) error { return p.Cancel(o.now()) })
	return err
}

// PauseTask asks a task to pause at its next stage boundary.
func (o *Orchestrator) PauseTask(ctx context.Context, taskID string) error {
	return o.withTask(ctx, taskID, func(t *task.Task, _ *taskRun) (*checkpoint.Checkpoint, error) {
		return nil, t.RequestPause(o.now())
	})
}

// ResumeTask continues a paused task at its next stage, or withdraws a pending pause request.
func (o *Orchestrator) ResumeTask(ctx context.Context, taskID string) error {
	return o.requeue(ctx, taskID, func(t *task.Task, _ *checkpoint.Checkpoint) (*checkpoint.Checkpoint, error) {
		return nil, t.Resume(o.now())
	})
}

// RetryTask runs a FAILED, CANCELLED, PAUSED or INTERRUPTED task again as a new attempt: from
// the stage after its checkpoint, or from stage 0 (forgetting the checkpoint). A finished plan
// is reopened.
func (o *Orchestrator) RetryTask(ctx context.Context, taskID string, fromCheckpoint bool) error {
	return o.requeue(ctx, taskID, func(t *task.Task, cp *checkpoint.Checkpoint) (*checkpoint.Checkpoint, error) {
		if fromCheckpoint {
			return nil, t.Retry(cp.Next(), o.now())
		}
		if err := t.Retry(0, o.now()); err != nil {
			return nil, err
		}
		cp.Reset(t.Fence(), o.now())
		return cp, nil
	})
}

// requeue applies fn to a task that is not running and queues it if fn left it PENDING.
func (o *Orchestrator) requeue(ctx context.Context, taskID string, fn func(t *task.Task, cp *checkpoint.Checkpoint) (*checkpoint.Checkpoint, error)) error {
	if o.draining.Load() {
		return ErrShuttingDown
	}
	t, err := o.tasks.Task(ctx, taskID)
	if err != nil {
		return err
	}
	unlock := o.planLocks.lock(t.PlanID())
	defer unlock()
	p, err := o.plans.Plan(ctx, t.PlanID())
	if err != nil {
		return err
	}
	cp, err := o.ckpts.Checkpoint(ctx, taskID)
	if errors.Is(err, checkpoint.ErrNotFound) {
		cp, err = checkpoint.New(taskID), nil
	}
	if err != nil {
		return err
	}
	queued := false
	err = o.withTask(ctx, taskID, func(t *task.Task, _ *taskRun) (*checkpoint.Checkpoint, error) {
		was := t.Status()
		out, err := fn(t, cp)
		// A run still winding down (it just paused or failed) is waited for by the next claim.
		queued = err == nil && t.Status() == task.Pending && was != task.Pending
		if queued {
			// The tenant must still be this task's: another executor may have given it a new one.
			err = o.tasks.Reactivate(ctx, t)
		}
		return out, err
	})
	if err != nil || !queued {
		return err
	}
	if p.Status().Terminal() {
		if err := p.Reopen(); err != nil {
			return err
		}
		if err := o.savePlan(ctx, p); err != nil {
			return fmt.Errorf("orchestrator: reopen plan %s: %w", p.ID(), err)
		}
		o.notify(p.ID())
	}
	o.enqueue(p, []string{taskID})
	return nil
}

// CancelTask ends a task for good. A running task is cancelled through its context; CancelTask
// returns once it has recorded the cancellation, or when ctx ends.
func (o *Orchestrator) CancelTask(ctx context.Context, taskID string) error {
	var running *taskRun
	planID := ""
	err := o.withTask(ctx, taskID, func(t *task.Task, run *taskRun) (*checkpoint.Checkpoint, error) {
		planID = t.PlanID()
		if run != nil {
			running = run
			run.cancel(errCancelRequested)
			return nil, errSkip
		}
		return nil, t.Cancel(&operatorCancel, o.now())
	})
	if errors.Is(err, errSkip) {
		select {
		case <-running.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		// A run that ended without recording the cancel (it had just parked its task at a
		// gate) leaves the task to cancel here.
		err = o.withTask(ctx, taskID, func(t *task.Task, _ *taskRun) (*checkpoint.Checkpoint, error) {
			if t.Status().Terminal() {
				return nil, errSkip
			}
			return nil, t.Cancel(&operatorCancel, o.now())
		})
		if errors.Is(err, errSkip) {
			err = nil
		}
	}
	if err != nil {
		return err
	}
	o.settle(planID, nil)
	return nil
}

// changePlan loads a plan, applies a transition and saves it. The caller holds the plan lock.
func (o *Orchestrator) changePlan(ctx context.Context, planID string, fn func(*plan.Plan) error) (*plan.Plan, error) {
	p, err := o.plans.Plan(ctx, planID)
	if err != nil {
		return nil, err
	}
	if err := fn(p); err != nil {
		return nil, err
	}
	if err := o.savePlan(ctx, p); err != nil {
		return nil, fmt.Errorf("orchestrator: save plan %s: %w", planID, err)
	}
	o.notify(planID)
	return p, nil
}

func (o *Orchestrator) run(planID string) *planRun {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.runs[planID]
}

// activeIn lists the tasks of planID this process is running.
func (o *Orchestrator) activeIn(planID string) []string {
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
	o.mu.Lock()
	run := o.active[taskID]
	o.mu.Unlock()
	if run != nil {
		run.cancel(errFenced)
	}
}
