package app

import (
	"context"
	"fmt"
	"strconv"

	"github.com/executor-dev/executor/domain/audit"
)

// PausePlan pauses a running plan.
func (s *Service) PausePlan(ctx context.Context, planID string) (PlanView, error) {
	return s.planOp(ctx, planID, "pause", s.plansWhileUp(s.planControl.PausePlan))
}

// ResumePlan resumes a paused plan and the tasks its pause paused; with all, the tasks paused
// one by one (PauseTenant) too. Without all, those stay PAUSED: an operator paused each for a
// reason of its own.
func (s *Service) ResumePlan(ctx context.Context, planID string, all bool) (PlanView, error) {
	var req []audit.Attr
	if all {
		req = append(req, attr("all", "true"))
	}
	return s.planOp(ctx, planID, "resume", func(ctx context.Context, planID string) error {
		return s.startingWork(ctx, func(ctx context.Context) error { return s.planControl.ResumePlan(ctx, planID, all) })
	}, req...)
}

// CancelPlan cancels a plan that has not ended.
func (s *Service) CancelPlan(ctx context.Context, planID string) (PlanView, error) {
	return s.planOp(ctx, planID, "cancel", s.plansWhileUp(s.planControl.CancelPlan))
}

// planOp runs op, the plan command name, on plan planID with its audit record, and answers
// the plan as it is afterwards.
func (s *Service) planOp(ctx context.Context, planID, name string, op func(context.Context, string) error, req ...audit.Attr) (PlanView, error) {
	if err := checkULID("planId", planID); err != nil {
		return PlanView{}, err
	}
	var v PlanView
	var readErr error
	err := s.audited(ctx, action{name: name, planID: planID, request: req}, func(ctx context.Context) ([]audit.Attr, error) {
		if err := op(ctx, planID); err != nil {
			return nil, err
		}
		if v, readErr = s.Plan(ctx, planID); readErr != nil {
			return nil, nil // taken: only the answer is missing
		}
		return planOutcome(v), nil
	})
	if err != nil {
		return PlanView{}, err
	}
	return v, readErr
}

// planOutcome is what a plan command's audit record keeps of the plan afterwards.
func planOutcome(v PlanView) []audit.Attr {
	out := []audit.Attr{attr("status", string(v.Plan.Status()))}
	if ph := v.Plan.Phase(); ph != "" {
		out = append(out, attr("phase", string(ph)))
	}
	if n := len(v.Plan.PartialApprovals()); n > 0 { // approvals short of the plan's count
		out = append(out, attr("approvals", fmt.Sprintf("%d of %d", n, v.Plan.Approvers().Needed())))
	}
	return out
}

// PauseTenant asks the tenant's latest task to pause at its next stage boundary.
func (s *Service) PauseTenant(ctx context.Context, tenantID string) (TaskView, error) {
	return s.tenantOp(ctx, tenantID, "pause", s.runningHere(s.taskControl.PauseTask))
}

// ResumeTenant resumes the tenant's paused latest task.
func (s *Service) ResumeTenant(ctx context.Context, tenantID string) (TaskView, error) {
	return s.tenantOp(ctx, tenantID, "resume", func(ctx context.Context, taskID string) error {
		return s.startingWork(ctx, func(ctx context.Context) error { return s.taskControl.ResumeTask(ctx, taskID) })
	})
}

// CancelTenant cancels the tenant's latest task.
func (s *Service) CancelTenant(ctx context.Context, tenantID string) (TaskView, error) {
	return s.tenantOp(ctx, tenantID, "cancel", s.runningHere(s.taskControl.CancelTask))
}

// SkipTenant ends the tenant's latest task without deploying the tenant, by an operator's
// decision (task.Task.Skip: it must not be RUNNING nor COMPLETED); comment is kept in the
// audit record. Its plan settles: with its other tenants done, it completes "with
// exceptions".
func (s *Service) SkipTenant(ctx context.Context, tenantID, comment string) (TaskView, error) {
	if err := checkComment(comment); err != nil {
		return TaskView{}, err
	}
	var req []audit.Attr
	if comment != "" {
		req = append(req, attr("comment", comment))
	}
	return s.tenantOp(ctx, tenantID, "skip", s.plansWhileUp(s.taskControl.SkipTask), req...)
}

// RetryTenant runs the tenant's latest task again: from the stage after its checkpoint, or
// from the first stage.
func (s *Service) RetryTenant(ctx context.Context, tenantID string, fromCheckpoint bool) (TaskView, error) {
	return s.tenantOp(ctx, tenantID, "retry", func(ctx context.Context, taskID string) error {
		return s.startingWork(ctx, func(ctx context.Context) error { return s.taskControl.RetryTask(ctx, taskID, fromCheckpoint) })
	}, attr("fromCheckpoint", strconv.FormatBool(fromCheckpoint)))
}

// RollbackTenant rolls the tenant's latest task back: a new run that undoes the stages it
// completed, newest first (or goes on with a rollback that stopped).
func (s *Service) RollbackTenant(ctx context.Context, tenantID string) (TaskView, error) {
	return s.tenantOp(ctx, tenantID, "rollback", func(ctx context.Context, taskID string) error {
		return s.startingWork(ctx, func(ctx context.Context) error { return s.taskControl.RollbackTask(ctx, taskID) })
	})
}

// tenantOp runs op, the tenant command name, on the tenant's latest task with its audit
// record, and answers the task as it is afterwards.
func (s *Service) tenantOp(ctx context.Context, tenantID, name string, op func(context.Context, string) error, req ...audit.Attr) (TaskView, error) {
	t, err := s.latest(ctx, tenantID)
	if err != nil {
		return TaskView{}, err
	}
	var v TaskView
	var readErr error
	a := action{name: name, planID: t.PlanID(), tenant: tenantID, taskID: t.ID(), request: req}
	err = s.audited(ctx, a, func(ctx context.Context) ([]audit.Attr, error) {
		if err := op(ctx, t.ID()); err != nil {
			return nil, err
		}
		if v, readErr = s.Task(ctx, t.ID()); readErr != nil {
			return nil, nil // taken: only the answer is missing
		}
		out := []audit.Attr{attr("status", string(v.Task.Status())), attrInt("attempt", v.Task.Attempt())}
		if w := v.Task.Wait(); w != nil && len(w.Approvals) > 0 { // an approval short of its gate's count
			out = append(out, attr("approvals", fmt.Sprintf("%d of %d", len(w.Approvals), v.Task.Stages()[w.StageIndex].Approvers.Needed())))
		}
		return out, nil
	})
	if err != nil {
		return TaskView{}, err
	}
	return v, readErr
}
