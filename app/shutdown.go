package app

import (
	"context"

	"github.com/executor-dev/executor/domain/errcode"
)

// refuseWork returns errcode.ErrShuttingDown once the executor is shutting down: no new plan,
// retry or resume (HTTP 503). Queries, pauses and cancels are still served.
func (s *Service) refuseWork() error {
	if s.avail.Availability().Draining {
		return errcode.ErrShuttingDown
	}
	return nil
}

// startingWork runs op, which would start work, unless the executor is shutting down (or
// degraded: ErrDegraded), with writes that must reach the shared store (see shared). A
// shutdown that begins meanwhile makes the Runner refuse with errcode.ErrShuttingDown.
func (s *Service) startingWork(ctx context.Context, op func(context.Context) error) error {
	if err := s.refuseWork(); err != nil {
		return err
	}
	return s.shared(ctx, op)
}
