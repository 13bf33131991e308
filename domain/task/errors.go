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
	ErrInvalid           = errors.New("task: invalid")
)

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
