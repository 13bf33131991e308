package plan

import (
	"errors"
	"fmt"
)

// Sentinel errors; match them with errors.Is.
var (
	ErrInvalidTransition = errors.New("plan: invalid transition")
	ErrNotFound          = errors.New("plan: not found")
	ErrInvalid           = errors.New("plan: invalid")
	// ErrConflict: the plan changed in the store since this copy was read (another writer's
	// compare-and-set won); read it again and re-apply the transition.
	ErrConflict = errors.New("plan: conflict: changed by another writer since it was read")
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
