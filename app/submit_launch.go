package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// LaunchTimeout bounds a submission's creation and launch of its plan. Once the creation
// begins they run to their end whatever the caller does (an HTTP client that goes away does
// not cancel them): a plan created and not launched would stay PENDING, its tenants claimed,
// with nothing left to start it.
const LaunchTimeout = time.Minute

// createAndLaunch stores p with its tasks and launches it, detached from the caller's
// cancellation (within LaunchTimeout). When the launch fails after the creation, the plan is
// cancelled, so that its tenants are free again: a plan is either created and launched, or
// ends CANCELLED (or is not created at all).
func (s *Service) createAndLaunch(ctx context.Context, p *plan.Plan, tasks []*task.Task) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), LaunchTimeout)
	defer cancel()
	var busy *task.BusyError
	if err := s.creator.CreatePlan(ctx, p, tasks); errors.As(err, &busy) {
		return &ConflictError{Tenants: busy.Tenants, Holders: s.conflictHolders(ctx, busy.Tenants)}
	} else if err != nil {
		return fmt.Errorf("app: create plan: %w", err)
	}
	err := s.launcher.Launch(ctx, p)
	if err == nil {
		return nil
	}
	// A fresh bound: the launch may have failed because it ran out of time.
	uctx, ucancel := context.WithTimeout(context.WithoutCancel(ctx), LaunchTimeout)
	defer ucancel()
	if cerr := s.planControl.CancelPlan(uctx, p.ID()); cerr != nil {
		return fmt.Errorf("app: launch plan %s: %w (and cancelling it failed: %w)", p.ID(), err, cerr)
	}
	return fmt.Errorf("app: launch plan %s (cancelled): %w", p.ID(), err)
}

// conflictHolders reads the latest task of the first tenants (at most MaxConflictsNamed), which a
// conflict names with their plans and statuses: those that cannot be read, or that ended
// meanwhile, are left out.
func (s *Service) conflictHolders(ctx context.Context, tenants []string) []ConflictHolder {
	var out []ConflictHolder
	for _, tenant := range tenants[:min(len(tenants), MaxConflictsNamed)] {
		t, err := s.tasks.Latest(ctx, tenant)
		if err != nil || t.Status().Terminal() {
			continue
		}
		out = append(out, ConflictHolder{Tenant: tenant, PlanID: t.PlanID(), TaskID: t.ID(), Status: t.Status()})
	}
	return out
}
