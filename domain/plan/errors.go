package plan

import (
	"errors"
	"fmt"

	"github.com/executor-dev/executor/domain/errcode"
)

// Sentinel errors; match them with errors.Is.
var (
	ErrInvalidTransition = errcode.WithDetail(errcode.InvalidTransition, "plan: invalid transition", "the operation is not allowed in the current state")
	ErrNotFound          = errcode.WithDetail(errcode.NotFound, "plan: not found", "plan not found")
	ErrInvalid           = errors.New("plan: invalid")
	// ErrConflict: the plan changed in the store since this copy was read (another writer's
	// compare-and-set won); read it again and re-apply the transition.
	// ErrStale: a measurement of a ring's analysis taken before the analysis was due (another
	// executor measured that time already); nothing was recorded.
	ErrStale    = errors.New("plan: a measurement taken before its analysis was due")
	ErrConflict = errcode.WithDetail(errcode.Conflict, "plan: conflict: changed by another writer since it was read", "changed by others many times meanwhile; try again")
)

// TransitionError describes a refused transition. It matches ErrInvalidTransition.
type TransitionError struct {
	From   Status
	Action string
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("plan: cannot %s a %s plan", e.Action, e.From)
}

// Unwrap returns ErrInvalidTransition.
func (e *TransitionError) Unwrap() error { return ErrInvalidTransition }

// Code is errcode.InvalidTransition.
func (e *TransitionError) Code() errcode.Code { return errcode.InvalidTransition }

// Detail is the refused transition, without the context that wraps it.
func (e *TransitionError) Detail() string { return e.Error() }
