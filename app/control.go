package app

import (
	"context"
)

// PausePlan pauses a running plan.
func (s *Service) PausePlan(ctx context.Context, planID string) (PlanView, error) {
	return s.planOp(ctx, planID, s.plansWhileUp(s.planControl.PausePlan))
}

// ResumePlan resumes a paused plan.
func (s *Service) ResumePlan(ctx context.Context, planID string) (PlanView, error) {
	return s.planOp(ctx, planID, func(ctx context.Context, planID string) error {
		return s.startingWork(ctx, func(ctx context.Context) error { return s.planControl.ResumePlan(ctx, planID) })
	})
}

// CancelPlan cancels a plan that has not ended.
func (s *Service) CancelPlan(ctx context.Context, planID string) (PlanView, error) {
	return s.planOp(ctx, planID, s.plansWhileUp(s.planControl.CancelPlan))
}

func (s *Service) planOp(ctx context.Context, planID string, op func(context.Context, string) error) (PlanView, error) {
	if err := checkULID("planId", planID); err != nil {
		return PlanView{}, err
	}
	if err := op(ctx, planID); err != nil {
		return PlanView{}, err
	}
	return s.Plan(ctx, planID)
}

// PauseTenant asks the tenant's latest task to pause at its next stage boundary.
func (s *Service) PauseTenant(ctx context.Context, tenantID string) (TaskView, error) {
	return s.tenantOp(ctx, tenantID, s.runningHere(s.taskControl.PauseTask))
}

// ResumeTenant resumes the tenant's paused latest task.
func (s *Service) ResumeTenant(ctx context.Context, tenantID string) (TaskView, error) {
	return s.tenantOp(ctx, tenantID, func(ctx context.Context, taskID string) error {
		return s.startingWork(ctx, func(ctx context.Context) error { return s.taskControl.ResumeTask(ctx, taskID) })
	})
}

// CancelTenant cancels the tenant's latest task.
func (s *Service) CancelTenant(ctx context.Context, tenantID string) (TaskView, error) {
	return s.tenantOp(ctx, tenantID, s.runningHere(s.taskControl.CancelTask))
}

// RetryTenant runs the tenant's latest task again: from the stage after its checkpoint, or
// from the first stage.
func (s *Service) RetryTenant(ctx context.Context, tenantID string, fromCheckpoint bool) (TaskView, error) {
	return s.tenantOp(ctx, tenantID, func(ctx context.Context, taskID string) error {
		return s.startingWork(ctx, func(ctx context.Context) error { return s.taskControl.RetryTask(ctx, taskID, fromCheckpoint) })
	})
}

// RollbackTenant rolls the tenant's latest task back: a new run that undoes the stages it
// completed, newest first (or goes on with a rollback that stopped).
func (s *Service) RollbackTenant(ctx context.Context, tenantID string) (TaskView, error) {
	return s.tenantOp(ctx, tenantID, func(ctx context.Context, taskID string) error {
		return s.startingWork(ctx, func(ctx context.Context) error { return s.taskControl.RollbackTask(ctx, taskID) })
	})
}

func (s *Service) tenantOp(ctx context.Context, tenantID string, op func(context.Context, string) error) (TaskView, error) {
	t, err := s.latest(ctx, tenantID)
	if err != nil {
		return TaskView{}, err
	}
	if err := op(ctx, t.ID()); err != nil {
		return TaskView{}, err
	}
	return s.Task(ctx, t.ID())
}
