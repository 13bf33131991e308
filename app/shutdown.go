package app

import (
	"context"
	"errors"
)

// ErrShuttingDown: the executor is shutting down and takes no new work: no new plan, retry
// or resume (HTTP 503). Queries, pauses and cancels are still served.
var ErrShuttingDown = errors.New("app: the executor is shutting down and takes no new work")

// refuseWork returns ErrShuttingDown once the executor is shutting down.
func (s *Service) refuseWork() error {
	if s.ShuttingDown != nil && s.ShuttingDown() {
		return ErrShuttingDown
	}
	return nil
}

// startingWork runs op, which would start work, unless the executor is shutting down (or
// degraded: ErrDegraded), with writes that must reach the shared store (see shared); an
// error op returns because a shutdown began meanwhile is reported as ErrShuttingDown.
func (s *Service) startingWork(ctx context.Context, op func(context.Context) error) error {
	if err := s.refuseWork(); err != nil {
		return err
	}
	err := s.shared(ctx, op)
	if err != nil && s.refuseWork() != nil {
		return errors.Join(ErrShuttingDown, err)
	}
	return err
}
