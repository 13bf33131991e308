package task

import (
	"errors"
	"fmt"
	"time"

	"github.com/executor-dev/executor/domain/errcode"
)

// ErrClaimsPaused is returned when no tenant may be claimed for a new task now: the store
// lost its data lately, and the executors that were running tenants must first take their
// leases back and write their state back. Match it with errors.Is; the error is a
// *ClaimsPausedError.
var ErrClaimsPaused = errors.New("task: new tenant claims are paused")

// ClaimsPausedError says until when new tenant claims wait, and why.
type ClaimsPausedError struct {
	RetryAfter time.Duration // when claims may be made again, from now
	Reason     string
}

func (e *ClaimsPausedError) Error() string {
	return fmt.Sprintf("task: new tenant claims wait %v: %s", e.RetryAfter.Round(time.Millisecond), e.Reason)
}

// Unwrap returns ErrClaimsPaused.
func (e *ClaimsPausedError) Unwrap() error { return ErrClaimsPaused }

// Code is errcode.ClaimsPaused.
func (e *ClaimsPausedError) Code() errcode.Code { return errcode.ClaimsPaused }

// Detail is what a caller is told: how long claims wait, to the second, and why.
func (e *ClaimsPausedError) Detail() string {
	return fmt.Sprintf("new tenant claims wait %v: %s", e.RetryAfter.Round(time.Second), e.Reason)
}
