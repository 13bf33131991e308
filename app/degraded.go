package app

import (
	"context"
	"errors"
)

// ErrDegraded: the executor runs degraded (Redis unreachable from it) where other executors
// share its Redis (--degraded-new-plans=reject), and the command would act on what it cannot
// see: a task another executor may be running (a cancel or pause of a task that does not run
// here: its run would go on), or work started from a copy that may be stale (a retry, a
// resume, a gate's decision, a plan-wide command). HTTP 503: the command takes effect through
// an executor that reaches Redis, or through this one once it does.
var ErrDegraded = errors.New("app: redis is unreachable from this executor, which cannot change what another executor may be running; " +
	"send the command to an executor that reaches Redis, or again once this one does")

// degraded reports whether the executor runs degraded where it must act only on what it runs.
func (s *Service) degraded() bool { return s.Degraded != nil && s.Degraded() }

// refuseDegraded returns ErrDegraded while degraded.
func (s *Service) refuseDegraded() error {
	if s.degraded() {
		return ErrDegraded
	}
	return nil
}

// runningHere wraps a task command that stops or pauses a run: while degraded it takes
// effect only on a task this executor runs (it stops the run at once, and the write-back
// applies it to Redis's copy), else it answers ErrDegraded.
func (s *Service) runningHere(op func(context.Context, string) error) func(context.Context, string) error {
	return func(ctx context.Context, taskID string) error {
		if s.degraded() && !s.Runner.Runs(taskID) {
			return ErrDegraded
		}
		return op(ctx, taskID)
	}
}

// plansWhileUp wraps a plan command: while degraded it answers ErrDegraded (the plan's tasks
// may run on other executors).
func (s *Service) plansWhileUp(op func(context.Context, string) error) func(context.Context, string) error {
	return func(ctx context.Context, planID string) error {
		if err := s.refuseDegraded(); err != nil {
			return err
		}
		return op(ctx, planID)
	}
}
