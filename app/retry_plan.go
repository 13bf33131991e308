package app

import (
	"context"
	"errors"
	"strconv"

	"github.com/executor-dev/executor/domain/audit"

	"github.com/executor-dev/executor/domain/task"
)

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
// with the reason; the others are retried regardless. The tasks are selected from the plan's
// index (BulkTasks with only statuses, answering the plan and the tasks retried).
func (s *Service) RetryPlan(ctx context.Context, planID string, req RetryPlanRequest) (PlanRetry, error) {
	if err := checkULID("planId", planID); err != nil {
		return PlanRetry{}, err
	}
	f := TaskFilter{Statuses: req.Statuses}
	if err := f.checkStatuses("status[%d]", task.RetryableStatuses()); err != nil {
		return PlanRetry{}, err
	}
	if len(f.Statuses) == 0 {
		f.Statuses = DefaultRetryStatuses
	}
	if err := errors.Join(s.refuseWork(), s.refuseDegraded()); err != nil {
		return PlanRetry{}, err
	}
	ctx, err := s.settledOnce(ctx)
	if err != nil {
		return PlanRetry{}, err
	}
	p, err := s.plans.Plan(ctx, planID)
	if err != nil {
		return PlanRetry{}, err
	}
	rf, err := f.resolve(p)
	if err != nil {
		return PlanRetry{}, err
	}
	var out PlanRetry
	a := action{name: "retry", planID: planID, request: append(f.auditAttrs(),
		attr("fromCheckpoint", strconv.FormatBool(req.FromCheckpoint)))}
	err = s.audited(ctx, a, func(ctx context.Context) ([]audit.Attr, error) {
		refs, missing, err := s.matching(ctx, p, rf)
		if err != nil {
			return nil, err
		}
		for _, m := range missing {
			out.Skipped = append(out.Skipped, TaskRef{TaskID: m.TaskID, Reason: ReasonTaskMissing})
		}
		retried, skipped, err := s.actOn(ctx, refs, func(ctx context.Context, id string) error {
			return s.taskControl.RetryTask(ctx, id, req.FromCheckpoint)
		})
		if err != nil {
			return nil, err
		}
		out.Retried, out.Skipped = retried, append(out.Skipped, skipped...)
		return []audit.Attr{attrInt("matched", len(refs)), attrInt("retried", len(out.Retried)),
			attrInt("skipped", len(out.Skipped))}, nil
	})
	if err != nil {
		return PlanRetry{}, err
	}
	if out.Plan, err = s.Plan(ctx, planID); err != nil {
		return PlanRetry{}, err
	}
	return out, nil
}
