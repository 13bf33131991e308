package app

import (
	"context"
	"time"

	"github.com/executor-dev/executor/domain/event"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/events"
)

// checkWait checks a long poll's wait: 0s to MaxWait.
func checkWait(wait time.Duration) error {
	if wait < 0 || wait > MaxWait {
		return invalid("wait", "must be between 0s and "+MaxWait.String())
	}
	return nil
}

// WaitTask returns the task once it is at rest (task.Status.AtRest), or as it is after wait (at most
// MaxWait). It follows the task's events (on Redis, those of every executor sharing it), and
// reads the task again every waitRecheck besides: an event is best effort, and a task whose
// owner died reads INTERRUPTED only when read.
func (s *Service) WaitTask(ctx context.Context, taskID string, wait time.Duration) (TaskView, error) {
	if err := checkWait(wait); err != nil {
		return TaskView{}, err
	}
	v, err := s.Task(ctx, taskID)
	if err != nil || wait == 0 || v.Task.Status().AtRest() {
		return v, err
	}
	f := events.Filter{PlanID: v.Task.PlanID(), TenantID: v.Task.TenantID()}
	mine := func(e event.Event) bool { return e.TaskID == taskID && restsAt(e) }
	return s.awaitRest(ctx, wait, f, mine, func(ctx context.Context) (TaskView, error) { return s.Task(ctx, taskID) })
}

// WaitTenantTask returns the tenant's latest task once it is at rest, or as it is after wait
// (at most MaxWait), as WaitTask does. A newer task of the tenant (a new plan) is followed
// from then on.
func (s *Service) WaitTenantTask(ctx context.Context, tenantID string, wait time.Duration) (TaskView, error) {
	if err := checkWait(wait); err != nil {
		return TaskView{}, err
	}
	if err := checkTenantID("tenantId", tenantID); err != nil {
		return TaskView{}, err
	}
	if err := s.refuseRead(); err != nil {
		return TaskView{}, err
	}
	read := func(ctx context.Context) (TaskView, error) { return s.TenantTask(ctx, tenantID) }
	if wait == 0 {
		return read(ctx)
	}
	f := events.Filter{TenantID: tenantID}
	return s.awaitRest(ctx, wait, f, restsAt, read)
}

// restsAt reports whether e tells that a task came to rest (a task event, or the stage event
// of a task's last stage, saying a status at rest).
func restsAt(e event.Event) bool {
	return e.Kind != event.Plan && task.Status(e.Status).AtRest()
}

// awaitRest reads a task with read until it is at rest or wait passed (then it reads it once
// more), reading it again at each event that f and match select (a task coming to rest). The
// watch is open before the first read, so that no transition falls between; a watch that ends (its watcher fell behind, its source
// gave up) is opened again at the next recheck, and the rechecks go on meanwhile.
func (s *Service) awaitRest(ctx context.Context, wait time.Duration, f events.Filter,
	match func(event.Event) bool, read func(context.Context) (TaskView, error)) (TaskView, error) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	recheck := time.NewTicker(waitRecheck)
	defer recheck.Stop()
	w := s.taskWatch(ctx, f)
	defer func() {
		if w != nil {
			w.Close()
		}
	}()
	v, err := read(ctx)
	for err == nil && !v.Task.Status().AtRest() {
		var live <-chan events.Entry
		if w != nil {
			live = w.Live()
		}
		select {
		case e, ok := <-live:
			if !ok {
				w.Close()
				w = nil
				continue
			}
			if !match(e.Event) {
				continue
			}
		case <-recheck.C:
			if w == nil {
				w = s.taskWatch(ctx, f)
			}
		case <-deadline.C:
			return read(ctx)
		case <-ctx.Done():
			return v, ctx.Err()
		}
		v, err = read(ctx)
	}
	return v, err
}

// taskWatch opens a watch of the live events f selects; nil when there is no event source
// or it refused (the rechecks alone then notice changes).
func (s *Service) taskWatch(ctx context.Context, f events.Filter) *events.Watch {
	if s.eventSource == nil {
		return nil
	}
	w, err := s.eventSource.Watch(ctx, f, "")
	if err != nil {
		return nil
	}
	return w
}
