package task

import (
	"errors"
	"fmt"

	"github.com/executor-dev/executor/domain/errcode"
)

// Sentinel errors; match them with errors.Is.
var (
	ErrInvalidTransition = errcode.WithDetail(errcode.InvalidTransition, "task: invalid transition", "the operation is not allowed in the current state")
	ErrStageOutOfOrder   = errors.New("task: stage completed out of order")
	ErrNotFound          = errcode.WithDetail(errcode.NotFound, "task: not found", "task not found")
	ErrFenced            = errcode.WithDetail(errcode.Fenced, "task: fenced: a newer run owns this task", "a newer run owns the task; try again")
	// ErrConflict: the task changed in the store since this copy was read (another writer's
	// compare-and-set won); read it again and re-apply the transition.
	ErrConflict   = errcode.WithDetail(errcode.Conflict, "task: conflict: changed by another writer since it was read", "changed by others many times meanwhile; try again")
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

// Code is errcode.TenantMovedOn.
func (e *BusyError) Code() errcode.Code { return errcode.TenantMovedOn }

// Detail is what a caller is told.
func (e *BusyError) Detail() string { return "the tenant has moved on to another task" }

// TransitionError describes a refused transition. It matches ErrInvalidTransition.
type TransitionError struct {
	From   Status
	Action string
	Reason string // why, when the status alone does not say; "" otherwise
}

func (e *TransitionError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("task: cannot %s a %s task: %s", e.Action, e.From, e.Reason)
	}
	return fmt.Sprintf("task: cannot %s a %s task", e.Action, e.From)
}

// Unwrap returns ErrInvalidTransition.
func (e *TransitionError) Unwrap() error { return ErrInvalidTransition }

// Code is errcode.InvalidTransition.
func (e *TransitionError) Code() errcode.Code { return errcode.InvalidTransition }

// Detail is the refused transition, without the context that wraps it.
func (e *TransitionError) Detail() string { return e.Error() }
