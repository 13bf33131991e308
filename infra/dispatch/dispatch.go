package dispatch

import (
	"errors"
	"fmt"
	"time"
)

// Limits are the limits a plan's starts obey across every executor.
type Limits struct {
	// MaxConcurrency bounds the plan's tasks claimed and not yet done, at once, plan-wide;
	// at least 1.
	MaxConcurrency int
	// StartRate is the most starts per minute, plan-wide; 0: no pacing. Burst 1: the first
	// start is immediate, then one every minute/StartRate.
	StartRate int
	// FailureBudget is the number of failed tasks after which the queue is emptied; 0: none.
	FailureBudget int
}

// InFlight is one claimed task.
type InFlight struct {
	Executor string    // the executor that claimed it
	Since    time.Time // when it was claimed (Redis: by Redis's clock, to the millisecond)
}

var (
	// ErrEmptyID is returned (wrapped) for an empty plan or task id ("" is Claim's
	// "nothing").
	ErrEmptyID = errors.New("empty id")
	// ErrInvalidLimits is returned (wrapped) by Push for limits out of range.
	ErrInvalidLimits = errors.New("invalid limits")
)

// validate checks lim.
func (lim Limits) validate() error {
	switch {
	case lim.MaxConcurrency < 1:
		return fmt.Errorf("%w: MaxConcurrency %d < 1", ErrInvalidLimits, lim.MaxConcurrency)
	case lim.StartRate < 0:
		return fmt.Errorf("%w: StartRate %d < 0", ErrInvalidLimits, lim.StartRate)
	case lim.FailureBudget < 0:
		return fmt.Errorf("%w: FailureBudget %d < 0", ErrInvalidLimits, lim.FailureBudget)
	}
	return nil
}

// checkPush validates a Push's arguments.
func checkPush(planID string, lim Limits, ids []string) error {
	if err := checkIDs("push", planID); err != nil {
		return err
	}
	if err := lim.validate(); err != nil {
		return fmt.Errorf("dispatch: push %s: %w", planID, err)
	}
	for _, id := range ids {
		if id == "" {
			return fmt.Errorf("dispatch: push %s: %w (a task id)", planID, ErrEmptyID)
		}
	}
	return nil
}

// checkIDs refuses empty ids for operation op.
func checkIDs(op string, ids ...string) error {
	for _, id := range ids {
		if id == "" {
			return fmt.Errorf("dispatch: %s: %w", op, ErrEmptyID)
		}
	}
	return nil
}

// interval is the time between two starts at rate starts per minute, to the millisecond as
// in Redis (claim.lua); 0 when rate is 0.
func interval(rate int) time.Duration {
	if rate <= 0 {
		return 0
	}
	return time.Duration(60000/rate) * time.Millisecond
}

// signal sends on a capacity-1 channel without blocking (coalesced).
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
