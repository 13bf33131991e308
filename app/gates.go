package app

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/executor-dev/executor/domain/audit"
	"github.com/executor-dev/executor/domain/errcode"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
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
	d := s.decision(ctx, approved, comment)
	name := "reject"
	if approved {
		name = "approve"
	}
	var req []audit.Attr
	if comment != "" {
		req = append(req, attr("comment", comment))
	}
	return s.tenantOp(ctx, tenantID, name, func(ctx context.Context, taskID string) error {
		err := s.startingWork(ctx, func(ctx context.Context) error { return s.taskControl.DecideTask(ctx, taskID, d) })
		return notAtItsGate(err, tenantID)
	}, req...)
}

// notAtItsGate adds to the refusal of a decision on the tenant's task that has not ended nor
// reached its gate the command that shows when it waits there; other errors are returned as
// they are.
func notAtItsGate(err error, tenantID string) error {
	var te *task.TransitionError
	if !errors.As(err, &te) || te.Action != "decide on" || te.From.Terminal() {
		return err
	}
	return errcode.Coded(errcode.InvalidTransition, err,
		fmt.Sprintf("%s ('executor status --tenant %s' shows its status)", te.Detail(), tenantID))
}

// ApprovePlan lets the tasks past a plan's canary wave start.
func (s *Service) ApprovePlan(ctx context.Context, planID string) (PlanView, error) {
	d := s.decision(ctx, true, "")
	return s.planOp(ctx, planID, "approve", func(ctx context.Context, planID string) error {
		return s.startingWork(ctx, func(ctx context.Context) error { return s.planControl.ApprovePlan(ctx, planID, d) })
	})
}

// RejectPlan halts a plan at its canary gate: the tasks past the wave never start.
func (s *Service) RejectPlan(ctx context.Context, planID string) (PlanView, error) {
	d := s.decision(ctx, false, "")
	return s.planOp(ctx, planID, "reject", s.plansWhileUp(func(ctx context.Context, planID string) error {
		return s.planControl.RejectPlan(ctx, planID, d)
	}))
}

// RejectPlanAndRollBack rejects a rolling plan's current ring (RejectPlan: nothing more
// starts, the next rings never do), then rolls back every task of that ring that ran
// (BulkTasks with BulkRollback over the ring): the tenants it reached are put back. It answers
// the plan as it is afterwards and what the rollback matched and applied.
func (s *Service) RejectPlanAndRollBack(ctx context.Context, planID string) (PlanView, BulkResult, error) {
	if err := checkULID("planId", planID); err != nil {
		return PlanView{}, BulkResult{}, err
	}
	p, err := s.plans.Plan(ctx, planID)
	if err != nil {
		return PlanView{}, BulkResult{}, err
	}
	if !p.Rollout().Enabled() {
		return PlanView{}, BulkResult{}, invalid("rollback", "the plan does not roll out in rings: roll its tasks back by filter ('executor plan bulk rollback', POST /v1/plans/{planId}/tasks/rollback)")
	}
	ring := p.Ring().Index
	if _, err := s.RejectPlan(ctx, planID); err != nil {
		return PlanView{}, BulkResult{}, err
	}
	out, err := s.BulkTasks(ctx, planID, BulkRequest{Action: BulkRollback, Filter: TaskFilter{Ring: strconv.Itoa(ring)}})
	if err != nil {
		return PlanView{}, BulkResult{}, err
	}
	v, err := s.Plan(ctx, planID)
	return v, out, err
}

// decision is an operator's decision now, by the caller ctx carries (WithOrigin): a gate's
// or a plan's approvers rule judges it by its By and Role.
func (s *Service) decision(ctx context.Context, approved bool, comment string) stage.Decision {
	o := originOf(ctx)
	return stage.Decision{Approved: approved, Comment: comment, DecidedAt: s.now(), By: o.Actor, Role: o.Role}
}

func checkComment(c string) error {
	if len(c) > MaxCommentLength {
		return invalid("comment", fmt.Sprintf("must be at most %d bytes", MaxCommentLength))
	}
	return nil
}
