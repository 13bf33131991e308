package app

import (
	"context"
	"fmt"

	"github.com/executor-dev/executor/domain/stage"
)

// MaxCommentLength bounds an operator's comment on a decision.
const MaxCommentLength = 1000

// ApproveTenant approves the gate (an approval stage) the tenant's latest task waits at: the
// task is queued and passes the gate.
func (s *Service) ApproveTenant(ctx context.Context, tenantID, comment string) (TaskView, error) {
	return s.decideTenant(ctx, tenantID, true, comment)
}

// RejectTenant rejects the gate the tenant's latest task waits at: the task fails permanently
// at that stage.
func (s *Service) RejectTenant(ctx context.Context, tenantID, comment string) (TaskView, error) {
	return s.decideTenant(ctx, tenantID, false, comment)
}

func (s *Service) decideTenant(ctx context.Context, tenantID string, approved bool, comment string) (TaskView, error) {
	if err := checkComment(comment); err != nil {
		return TaskView{}, err
	}
	d := stage.Decision{Approved: approved, Comment: comment, DecidedAt: s.now()}
	return s.tenantOp(ctx, tenantID, func(ctx context.Context, taskID string) error {
		return s.startingWork(ctx, func(ctx context.Context) error { return s.taskControl.DecideTask(ctx, taskID, d) })
	})
}

// ApprovePlan lets the tasks past a plan's canary wave start.
func (s *Service) ApprovePlan(ctx context.Context, planID string) (PlanView, error) {
	return s.planOp(ctx, planID, func(ctx context.Context, planID string) error {
		return s.startingWork(ctx, func(ctx context.Context) error { return s.planControl.ApprovePlan(ctx, planID) })
	})
}

// RejectPlan halts a plan at its canary gate: the tasks past the wave never start.
func (s *Service) RejectPlan(ctx context.Context, planID string) (PlanView, error) {
	return s.planOp(ctx, planID, s.plansWhileUp(s.planControl.RejectPlan))
}

func checkComment(c string) error {
	if len(c) > MaxCommentLength {
		return invalid("comment", fmt.Sprintf("must be at most %d bytes", MaxCommentLength))
	}
	return nil
}
