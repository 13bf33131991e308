package orchestrator

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// Signals carries operators' commands to every executor sharing the store (on Redis: one
// pub/sub channel), so that the executor running a task or a plan acts on a command at once,
// whichever executor received it. Delivery is best effort: the command itself is already in
// the store (a compare-and-set), and a run also learns of it from the reply to its next
// write or heartbeat.
type Signals interface {
	// Send tells every executor (this one included) of msg.
	Send(ctx context.Context, msg string) error
}

// The signals an orchestrator sends and understands: "<kind> <id>".
const (
	sigCancel = "cancel" // task id: an operator cancelled it; its run stops now
	sigPause  = "pause"  // task id: an operator asked it to pause (or to roll back); its run reads it again at its next boundary
	sigPlan   = "plan"   // plan id: its status changed (pause, resume, cancel); follow it
)

// signal tells every executor of a command on id (a task or a plan id).
func (o *core) signal(ctx context.Context, kind, id string) {
	if o.cfg.Signals == nil {
		return
	}
	if err := o.cfg.Signals.Send(context.WithoutCancel(ctx), kind+" "+id); err != nil {
		o.cfg.Logger.Warn("signal other executors", "signal", kind, "id", id, "err", err)
	}
}

// Receive acts on a signal another executor (or this one) sent: it stops, or asks to
// re-read, this executor's run of the task it names, or makes this executor's share of the
// plan it names follow the plan's status. Unknown signals are ignored.
func (ctl *control) Receive(msg string) {
	kind, id, ok := strings.Cut(msg, " ")
	if !ok || id == "" {
		return
	}
	switch kind {
	case sigCancel:
		if run := ctl.local(id); run != nil {
			run.cancel(errCancelRequested)
		}
	case sigPause:
		if run := ctl.local(id); run != nil {
			run.recheck.Store(true)
		}
	case sigPlan:
		ctl.refreshPlan(id)
		ctl.notify(id) // its status changed, maybe on another executor: wake the waits on it
		ctl.followPlan(id)
	}
}

// refreshPlan has a plan store that holds copies read the plan again: the Redis store's mirror
// then lets go of a plan that another executor ended, and of its copies of the plan's tasks
// (stale: the other executor ran them), which it would keep otherwise.
func (ctl *control) refreshPlan(planID string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctl.ctx), persistTimeout)
	defer cancel()
	ctl.plans.Refresh(ctx, planID)
}

// local returns this executor's run of task id, or nil.
func (o *core) local(id string) *taskRun {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.active[id]
}

// followPlan makes this executor's runs of a plan follow the plan's status as stored: a
// PAUSED plan's runs pause at their next boundary; an ended plan's runs here stop. (Starts
// follow the plan in its Queue, which the command paused or emptied.)
func (ctl *control) followPlan(planID string) {
	if len(ctl.activeIn(planID)) == 0 {
		return // nothing of the plan here (its queue is shared: the pause is there already)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctl.ctx), persistTimeout)
	defer cancel()
	p, err := ctl.plans.Plan(ctx, planID)
	if err != nil {
		ctl.cfg.Logger.Warn("follow plan", "plan_id", planID, "err", err)
		return
	}
	switch {
	case p.Status() == plan.Paused:
		ctl.pauseHere(ctx, planID)
	case p.Status().Terminal():
		ctl.cancelHere(planID)
	}
}

// pauseHere asks this executor's runs of the plan's tasks to pause at their next stage
// boundary.
func (ctl *control) pauseHere(ctx context.Context, planID string) {
	for _, id := range ctl.activeIn(planID) {
		_, err := ctl.update(ctx, id, func(t *task.Task) (*checkpoint.Checkpoint, error) {
			if t.Status() != task.Running && t.Status() != task.Pending {
				return nil, errSkip // a task just claimed is still PENDING while it takes its lease
			}
			return nil, t.RequestPlanPause(ctl.now())
		})
		if err != nil && !errors.Is(err, errSkip) {
			ctl.cfg.Logger.Warn("pause task of a paused plan", "plan_id", planID, "task_id", id, "err", err)
		}
		if run := ctl.local(id); run != nil {
			run.recheck.Store(true)
		}
	}
}

// cancelHere stops this executor's runs of the plan's tasks (an operator cancelled the plan,
// maybe on another executor).
func (ctl *control) cancelHere(planID string) {
	for _, id := range ctl.activeIn(planID) {
		if run := ctl.local(id); run != nil {
			run.cancel(errCancelRequested)
		}
	}
}

// stopWait bounds how long a cancel waits for a run on another executor to stop (its lease
// released); the cancel is recorded whatever happens.
const stopWait = 5 * time.Second

// awaitStopped waits until the run of t has stopped: this executor's run has ended, or
// another executor's has released the tenant's lease (or ctx ends, or stopWait passed).
func (o *core) awaitStopped(ctx context.Context, t *task.Task) {
	if run := o.local(t.ID()); run != nil {
		select {
		case <-run.done:
		case <-ctx.Done():
		}
		return
	}
	deadline := time.NewTimer(stopWait)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		h, held, err := o.locker.Holder(ctx, t.TenantID())
		if err != nil || !held || !ownsTask(h.Owner, t.PlanID(), t.ID()) {
			return
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		}
	}
}
