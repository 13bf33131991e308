package task

import (
	"errors"
	"fmt"
)

// Sentinel errors; match them with errors.Is.
var (
	ErrInvalidTransition = errors.New("task: invalid transition")
	ErrStageOutOfOrder   = errors.New("task: stage completed out of order")
	ErrNotFound          = errors.New("task: not found")
	ErrFenced            = errors.New("task: fenced: a newer run owns this task")
	// ErrConflict: the task changed in the store since this copy was read (another writer's
	// compare-and-set won); read it again and re-apply the transition.
	ErrConflict   = errors.New("task: conflict: changed by another writer since it was read")
	ErrInvalid    = errors.New("task: invalid")
	ErrTenantBusy = errors.New("task: tenant busy: its latest task has not ended")
)

// BusyError lists tenants whose latest task has not ended (or that moved on to another task),
// so they cannot take a new one. It matches ErrTenantBusy.
type BusyError struct {
	Tenants []string
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("task: tenants busy: %v", e.Tenants)
}

// Unwrap returns ErrTenantBusy.
func (e *BusyError) Unwrap() error { return ErrTenantBusy }

// TransitionError describes a refused transition. It matches ErrInvalidTransition.
type TransitionError struct {
	From   Status
	Action string
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("task: cannot %s a %s task", e.Action, e.From)
}

// Unwrap returns ErrInvalidTransition.
func (e *TransitionError) Unwrap() error { return ErrInvalidTransition }
