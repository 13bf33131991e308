package orchestrator

import (
	"context"

	"github.com/executor-dev/executor/domain/lease"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// PausePlan stops new task starts and asks the plan's running tasks to pause at their next
// stage boundary, wherever they run.
func (o *Orchestrator) PausePlan(ctx context.Context, planID string) error {
	return o.control.PausePlan(ctx, planID)
}

// ResumePlan lets a paused plan's tasks start again and resumes the tasks its pause paused
// at their next stage; with all, those paused one by one too.
func (o *Orchestrator) ResumePlan(ctx context.Context, planID string, all bool) error {
	return o.control.ResumePlan(ctx, planID, all)
}

// CancelPlan ends the plan and every task of it that has not ended, wherever it runs.
func (o *Orchestrator) CancelPlan(ctx context.Context, planID string) error {
	return o.control.CancelPlan(ctx, planID)
}

// PauseTask asks a task to pause at its next stage boundary, wherever it runs.
func (o *Orchestrator) PauseTask(ctx context.Context, taskID string) error {
	return o.control.PauseTask(ctx, taskID)
}

// ResumeTask continues a paused task at its next stage, or withdraws a pending pause request.
func (o *Orchestrator) ResumeTask(ctx context.Context, taskID string) error {
	return o.control.ResumeTask(ctx, taskID)
}

// RollbackTask rolls a task back: a new run that undoes its completed stages, newest first.
func (o *Orchestrator) RollbackTask(ctx context.Context, taskID string) error {
	return o.control.RollbackTask(ctx, taskID)
}

// RetryTask runs a FAILED, CANCELLED, PAUSED or INTERRUPTED task again as a new attempt.
func (o *Orchestrator) RetryTask(ctx context.Context, taskID string, fromCheckpoint bool) error {
	return o.control.RetryTask(ctx, taskID, fromCheckpoint)
}

// SkipTask ends a task that does not run without deploying its tenant (task.Task.Skip), and
// settles its plan.
func (o *Orchestrator) SkipTask(ctx context.Context, taskID string) error {
	return o.control.SkipTask(ctx, taskID)
}

// CancelTask ends a task for good, by a compare-and-set, wherever it runs.
func (o *Orchestrator) CancelTask(ctx context.Context, taskID string) error {
	return o.control.CancelTask(ctx, taskID)
}

// DecideTask records an operator's decision on a WAITING task's gate (approve, or reject) and
// queues the task.
func (o *Orchestrator) DecideTask(ctx context.Context, taskID string, d stage.Decision) error {
	return o.control.DecideTask(ctx, taskID, d)
}

// Launch starts a newly created plan, at once or at its startAt.
func (o *Orchestrator) Launch(ctx context.Context, p *plan.Plan) error {
	return o.control.Launch(ctx, p)
}

// Queued returns how many tasks wait to start across every plan with work in the Queue
// (launched or requeued, not yet claimed).
func (o *Orchestrator) Queued() int {
	return o.dispatcher.Queued()
}

// Reap interrupts, and returns so, those of tasks whose owner is gone (see recovery.Reap);
// it also returns how many it reaped.
func (o *Orchestrator) Reap(ctx context.Context, tasks []*task.Task) ([]*task.Task, int, error) {
	return o.recovery.Reap(ctx, tasks)
}

// Relaunch makes sure a plan that was created, and maybe started, by a submission whose
// executor died before it finished launching it (a kill -9 between the creation and the push
// of its tasks) runs.
func (o *Orchestrator) Relaunch(ctx context.Context, planID string) error {
	return o.control.Relaunch(ctx, planID)
}

// ApprovePlan is an operator's approval of a rolling plan's current ring (plan.ApproveRing).
func (o *Orchestrator) ApprovePlan(ctx context.Context, planID string, d stage.Decision) error {
	return o.rollout.ApprovePlan(ctx, planID, d)
}

// RejectPlan is an operator's rejection of a rolling plan.
func (o *Orchestrator) RejectPlan(ctx context.Context, planID string, d stage.Decision) error {
	return o.rollout.RejectPlan(ctx, planID, d)
}

// StartScheduled starts a SCHEDULED plan whose time has come, or ends the bake of a rolling
// plan's ring.
func (o *Orchestrator) StartScheduled(ctx context.Context, planID string) error {
	return o.control.StartScheduled(ctx, planID)
}

// Receive acts on a signal another executor (or this one) sent.
func (o *Orchestrator) Receive(msg string) {
	o.control.Receive(msg)
}

// Unlock removes a tenant's lease whoever holds it (an SRE freeing a tenant stuck behind a
// lease) and fences its holder.
func (o *Orchestrator) Unlock(ctx context.Context, tenantID string) (lease.Unlocked, error) {
	return o.recovery.Unlock(ctx, tenantID)
}
