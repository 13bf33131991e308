package app

import (
	"fmt"
	"time"

	"github.com/executor-dev/executor/domain/errcode"
)

// ErrBusy: the executor's queue of tasks waiting to start is full; submit again later
// (HTTP 429 with Retry-After). Match it with errors.Is; the error is a *BusyError.
var ErrBusy = errcode.New(errcode.Busy, "app: the executor's queue is full")

// Bounds and basis of BusyError.RetryAfter.
const (
	// NominalTaskTime is how long a task is assumed to hold its worker slot.
	NominalTaskTime = time.Second
	MinRetryAfter   = time.Second
	MaxRetryAfter   = 60 * time.Second
)

// BusyError refuses a submission that would queue more than Limits.MaxQueued tasks. It
// matches ErrBusy.
type BusyError struct {
	Queued  int // tasks waiting to start when the plan was refused
	Tenants int // tasks the refused plan would have queued
	Limit   int // Limits.MaxQueued
	// RetryAfter estimates when the plan would fit, in whole seconds within [MinRetryAfter,
	// MaxRetryAfter]: the excess (Queued+Tenants-Limit) must start first, and the workers start
	// one task each per NominalTaskTime.
	RetryAfter time.Duration
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("the executor is busy: %d tasks wait to start and the plan adds %d, over the limit of %d; retry in %s",
		e.Queued, e.Tenants, e.Limit, e.RetryAfter)
}

// Unwrap returns ErrBusy.
func (e *BusyError) Unwrap() error { return ErrBusy }

// checkQueue refuses a plan of n tasks that would queue more than MaxQueued. Only new plans
// are refused: a retry or resume of a tenant or plan is never, so an operator fixing a rollout
// is not locked out by a busy executor.
func (s *Service) checkQueue(n int) error {
	limit := s.limits.withDefaults().MaxQueued
	queued := s.launcher.Queued()
	if queued+n <= limit {
		return nil
	}
	return &BusyError{Queued: queued, Tenants: n, Limit: limit, RetryAfter: retryAfter(queued+n-limit, s.launcher.Workers())}
}

// retryAfter estimates how long excess queued tasks take to start with workers slots.
func retryAfter(excess, workers int) time.Duration {
	workers = max(workers, 1)
	rounds := excess/workers + min(excess%workers, 1) // rounded up
	if rounds >= int(MaxRetryAfter/NominalTaskTime) {
		return MaxRetryAfter
	}
	return max(time.Duration(rounds)*NominalTaskTime, MinRetryAfter)
}
