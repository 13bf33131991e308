package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/lease"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// Reap returns tasks as they stand: a RUNNING task that no run of this process owns, whose
// heartbeat is older than the lease TTL and whose tenant lease is gone (or held by another
// run) lost its owner: it is taken over with a new fence epoch (so the lost run can never
// write again), saved as INTERRUPTED, and returned so. Nothing scans for such tasks: they are
// found when read (and by the reconciler, reconcile.go). Each plan with a task reaped is
// PAUSED with a reason naming the lost executor and its interrupted tenants, never settled:
// started work is not ended nor re-run without an operator. Tasks that need no change cost no
// I/O. It also returns how many it reaped.
func (rec *recovery) Reap(ctx context.Context, tasks []*task.Task) ([]*task.Task, int, error) {
	var out []*task.Task
	plans := map[string][]string{} // reaped task ids by plan
	for i, t := range tasks {
		if !rec.suspect(t) {
			continue
		}
		reaped, err := rec.reap(ctx, t)
		if err != nil {
			return nil, 0, err
		}
		if reaped == nil {
			continue
		}
		if out == nil {
			out = append([]*task.Task(nil), tasks...)
		}
		out[i] = reaped
		plans[reaped.PlanID()] = append(plans[reaped.PlanID()], reaped.ID())
	}
	for planID, ids := range plans {
		rec.pauseLost(ctx, planID, ids)
	}
	if out == nil {
		return tasks, 0, nil
	}
	n := 0
	for i := range out {
		if out[i] != tasks[i] {
			n++
		}
	}
	return out, n, nil
}

// pauseLost pauses planID for its runs ids, reaped, then frees their claims (as the
// reconciler does, so that the next reconcile does not pause the plan again once an SRE has
// resumed it). A failure is logged: the reconciler pauses the plan and frees the claims then.
func (rec *recovery) pauseLost(ctx context.Context, planID string, ids []string) {
	if rec.pauseForLoss(ctx, planID) != nil {
		return
	}
	for _, id := range ids {
		if err := rec.releaseLost(ctx, planID, id); err != nil {
			rec.cfg.Logger.Debug("free a lost run's claim", "plan_id", planID, "task_id", id, "err", err)
			return
		}
	}
}

// suspect is the cheap test: RUNNING, not run here, heartbeat older than the lease TTL (plus
// lease.Margin where executors share the store: the owner's self-fencing lease stops its run
// a margin before the TTL, counted from its last confirmed refresh, so by then it has
// stopped, however slow its Redis).
func (rec *recovery) suspect(t *task.Task) bool {
	if t.Status() != task.Running || rec.now().Sub(t.HeartbeatAt()) <= rec.judgeAfter() || rec.degraded() {
		return false
	}
	return rec.local(t.ID()) == nil
}

// reap interrupts t if its lease is gone; it returns the interrupted task, or nil when t's
// owner still holds the lease.
func (rec *recovery) reap(ctx context.Context, t *task.Task) (*task.Task, error) {
	h, held, err := rec.locker.Holder(ctx, t.TenantID())
	if err != nil {
		return nil, fmt.Errorf("orchestrator: lease of %s: %w", t.TenantID(), err)
	}
	if held && ownsTask(h.Owner, t.PlanID(), t.ID()) {
		return nil, nil // alive but slow to beat: not ours to judge
	}
	if alive, err := rec.ownerAlive(ctx, t); err != nil || alive {
		return nil, err
	}
	reaped, err := rec.takeOver(ctx, t.ID())
	if err != nil || reaped == nil {
		return nil, err
	}
	rec.cfg.Logger.Warn("task interrupted: its owner is gone", "plan_id", t.PlanID(), "task_id", t.ID(),
		"tenant_id", t.TenantID(), "heartbeat_at", t.HeartbeatAt())
	return reaped, nil
}

// takeOver bumps the task's fence first, so its lost run can no longer write, then judges
// the task as the store holds it at that epoch (a mirror copy may be stale) and interrupts it
// if it is still a RUNNING task without a live owner. A needless bump is harmless: every run bumps
// the epoch again when it starts.
func (rec *recovery) takeOver(ctx context.Context, id string) (*task.Task, error) {
	unlock := rec.taskLocks.lock(id)
	defer unlock()
	if rec.local(id) != nil {
		return nil, nil
	}
	if _, err := rec.tasks.BumpFence(ctx, id); err != nil { // the lost run can write no more
		return nil, fmt.Errorf("orchestrator: reap %s: %w", id, err)
	}
	cur, err := rec.update(ctx, id, func(cur *task.Task) (*checkpoint.Checkpoint, error) {
		if !rec.suspect(cur) {
			return nil, errSkip // it ended, or beat, meanwhile
		}
		return nil, cur.Abandon(cur.Fence(), task.Failure{
			Stage: stageName(cur), Class: stage.ClassLeaseLost,
			Message: "owner lost: its lease is gone and it has not beaten since " + cur.HeartbeatAt().Format(time.RFC3339),
		}, rec.now())
	})
	if errors.Is(err, errSkip) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("orchestrator: reap %s: %w", id, err)
	}
	return cur, nil
}

// judgeAfter is how long after a RUNNING task's last heartbeat a reader may judge its owner
// gone (suspect).
func (rec *recovery) judgeAfter() time.Duration {
	if rec.cfg.Shared {
		return rec.cfg.LeaseTTL + lease.Margin(rec.cfg.LeaseTTL)
	}
	return rec.cfg.LeaseTTL
}

func stageName(t *task.Task) string {
	if i := t.CurrentStage(); i < len(t.Stages()) {
		return t.Stages()[i].Name
	}
	return ""
}

// ownerAlive reports whether the executor that started t's run may still be running it, so a
// reader must not judge it: that executor is alive as the same process since the run started
// (alone; where executors share the store a run's lease self-fences, so an owner alive past
// its lease has stopped that run);
// or this executor's own liveness lapsed within a lease TTL (Redis stalled past the TTL or lost
// its data: every executor's lease, liveness and heartbeat lapsed alike, and the owner gets a
// lease TTL to beat again before anyone judges it). A run of this executor's own name that is
// not running here belongs to an earlier process: it is not alive.
func (rec *recovery) ownerAlive(ctx context.Context, t *task.Task) (bool, error) {
	c := rec.cfg.Cluster
	if c == nil {
		return false, nil
	}
	steady, err := c.Steady(ctx, rec.cfg.LeaseTTL)
	if err != nil {
		return false, fmt.Errorf("orchestrator: own liveness: %w", err)
	}
	if !steady {
		return true, nil
	}
	if rec.cfg.Shared {
		// A self-fencing lease: its key gone and the heartbeat older than the TTL and its
		// margin, the run has stopped, whether or not its executor lives on.
		return false, nil
	}
	if t.Executor() == "" || t.Executor() == rec.cfg.Name {
		return false, nil
	}
	alive, err := c.AliveSince(ctx, t.Executor(), t.StartedAt())
	if err != nil {
		return false, fmt.Errorf("orchestrator: is %s alive: %w", t.Executor(), err)
	}
	return alive, nil
}
