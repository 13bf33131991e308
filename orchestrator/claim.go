package orchestrator

import (
	"context"
	"fmt"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// claim makes task id this process's run, if it is still PENDING (nil, nil when it is not,
// or when another claim here runs it). A previous run of the same task here (it paused, and
// was resumed at once) is waited for first, until it has released the tenant's lease: the new
// run must not find its own task's lease still held. An error means the task could not be
// read (or the wait was cut short): the caller hands it back (claimFailed), never drops it.
func (d *dispatcher) claim(ctx context.Context, id string, cancel context.CancelCauseFunc) (*taskRun, error) {
	for {
		prev := d.local(id)
		if prev == nil {
			break
		}
		select { // without the task lock: the previous run may need it to finish
		case <-prev.done:
		case <-ctx.Done():
			return nil, fmt.Errorf("orchestrator: claim task %s: %w", id, context.Cause(ctx))
		}
	}
	unlock := d.taskLocks.lock(id)
	defer unlock()
	// A local copy will do (task.Repository.Peek): start re-reads the task as the store holds
	// it at the run's new fence epoch, so a stale copy starts nothing.
	t, err := d.tasks.Peek(ctx, id)
	if err == nil && t.Status() != task.Pending {
		// The local copy may be stale: another executor may have made the task PENDING
		// again (a retry) and queued it. The store decides.
		t, err = d.tasks.Task(ctx, id)
	}
	if err != nil {
		return nil, fmt.Errorf("orchestrator: claim task %s: %w", id, err)
	}
	if t.Status() != task.Pending {
		return nil, nil // cancelled or changed while queued
	}
	run := &taskRun{
		o: d.core, id: id, planID: t.PlanID(), tenantID: t.TenantID(), attempt: t.Attempt(),
		ctx: ctx, cancel: cancel, done: make(chan struct{}),
	}
	run.task.Store(t)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.active[id] != nil {
		return nil, nil // another claim won the race: its planRun runs the task
	}
	d.active[id] = run
	return run, nil
}

func (d *dispatcher) unclaim(run *taskRun) {
	d.mu.Lock()
	delete(d.active, run.id)
	d.mu.Unlock()
	close(run.done)
}

// runTask runs one task to its end (or its next pause, or its hand-back) and reports how it
// ended: it claims the task, takes the tenant's lease, starts the task at a new fence epoch
// and runs its stages from its checkpoint.
func (d *dispatcher) runTask(ph *planHere, id string) runEnd {
	ctx, cancel := context.WithCancelCause(d.ctx)
	defer cancel(nil)
	run, err := d.claim(ctx, id, cancel)
	if err != nil {
		return d.claimFailed(id, err)
	}
	if run == nil {
		return endDone
	}
	defer d.unclaim(run)
	// Every line of a run names its plan, task, tenant, run attempt and stage (log is the
	// run's logger; at adds the stage the run starts at, each stage's lines add their own).
	log := d.cfg.Logger.With("plan_id", run.planID, "task_id", id, "tenant_id", run.tenantID, "attempt", run.attempt)
	at := log.With("stage", stageAt(run.cur()))
	if d.draining.Load() { // claimed as the shutdown began: it never starts here
		return run.endUnstarted(at)
	}
	held, end := run.takeLease(at)
	if held == nil {
		return end
	}
	defer run.releaseLease(held, at)
	epoch, err := run.start()
	if err != nil {
		return run.notStarted(err, at)
	}
	at.Info("task started", "run", run.attempt, "from_stage", run.cur().CurrentStage(), "rollback", run.cur().RollingBack())
	stopBeat := run.heartbeat(at)
	defer stopBeat()
	cp, err := run.resumePoint()
	if err != nil {
		return ended(run.end(nil, task.Failure{Class: stage.ClassPermanent, Message: "load checkpoint: " + err.Error()}, false, at))
	}
	return run.runStages(ph, cp, epoch, log)
}
