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
