package app

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/executor-dev/executor/domain/task"
)

// RetryableStatuses are the statuses a task can be retried from.
var RetryableStatuses = []task.Status{task.Failed, task.Interrupted, task.Cancelled, task.Paused}

// DefaultRetryStatuses are the statuses a bulk retry takes when none is named.
var DefaultRetryStatuses = []task.Status{task.Failed, task.Interrupted}

// RetryPlanRequest selects the tasks of a plan to retry.
type RetryPlanRequest struct {
	Statuses       []task.Status // empty: DefaultRetryStatuses
	FromCheckpoint bool          // false: from the first stage
}

// TaskRef names one task of a bulk operation.
type TaskRef struct {
	TaskID   string
	TenantID string
	Reason   string // why it was skipped; empty for a task that was retried
}

// PlanRetry is what a bulk retry did.
type PlanRetry struct {
	Plan    PlanView
	Retried []TaskRef
	Skipped []TaskRef // selected, but not retried (e.g. the tenant has a newer task)
}

// RetryPlan retries every task of a plan whose status is one of req.Statuses, as RetryTenant
// does for one: a new attempt, from the checkpoint or from the first stage. A task that
// cannot be retried (its tenant moved on to another plan, it changed meanwhile) is skipped
// with the reason; the others are retried regardless.
func (s *Service) RetryPlan(ctx context.Context, planID string, req RetryPlanRequest) (PlanRetry, error) {
	if err := checkULID("planId", planID); err != nil {
		return PlanRetry{}, err
	}
	want := req.Statuses
	if len(want) == 0 {
		want = DefaultRetryStatuses
	}
	for i, st := range want {
		if !slices.Contains(RetryableStatuses, st) {
			return PlanRetry{}, invalid(fmt.Sprintf("status[%d]", i),
				fmt.Sprintf("%q cannot be retried: use one of %v", st, RetryableStatuses))
		}
	}
	if err := errors.Join(s.refuseWork(), s.refuseDegraded()); err != nil {
		return PlanRetry{}, err
	}
	p, err := s.Plans.Plan(ctx, planID)
	if err != nil {
		return PlanRetry{}, err
	}
	tasks, missing, _, err := s.tasksOf(ctx, p.TaskIDs())
	if err != nil {
		return PlanRetry{}, err
	}
	var out PlanRetry
	for _, m := range missing {
		out.Skipped = append(out.Skipped, TaskRef{TaskID: m.TaskID, Reason: ReasonTaskMissing})
	}
	for _, t := range tasks {
		if !slices.Contains(want, t.Status()) {
			continue
		}
		ref := TaskRef{TaskID: t.ID(), TenantID: t.TenantID()}
		err := s.startingWork(func() error { return s.Runner.RetryTask(ctx, t.ID(), req.FromCheckpoint) })
		switch {
		case err == nil:
			out.Retried = append(out.Retried, ref)
		case errors.Is(err, ErrShuttingDown) || ctx.Err() != nil:
			return PlanRetry{}, err
		default:
			ref.Reason = err.Error()
			out.Skipped = append(out.Skipped, ref)
		}
	}
	if out.Plan, err = s.Plan(ctx, planID); err != nil {
		return PlanRetry{}, err
	}
	return out, nil
}
