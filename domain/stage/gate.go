package stage

import (
	"errors"
	"time"
)

// ErrAwaiting is matched (errors.Is) by an *AwaitError: the stage waits for an operator's
// decision and the task waits with it, holding neither a worker nor the tenant's lease.
var ErrAwaiting = errors.New("stage: awaiting an operator's decision")

// AwaitError is what a gate's handler returns while its stage has no Decision yet: the task
// becomes WAITING with Reason and Message until an operator approves or rejects it; then the
// stage runs again with the Decision in its Request.
type AwaitError struct {
	Reason  string // why the task waits, e.g. "approval"
	Message string // what the operator is asked; may be empty
}

func (e *AwaitError) Error() string {
	if e.Message == "" {
		return "awaiting " + e.Reason
	}
	return "awaiting " + e.Reason + ": " + e.Message
}

// Unwrap returns ErrAwaiting.
func (e *AwaitError) Unwrap() error { return ErrAwaiting }

// Await returns the *AwaitError a gate's handler returns while it waits for a decision.
func Await(reason, message string) error { return &AwaitError{Reason: reason, Message: message} }

// Decision is an operator's answer to a waiting stage of one run of a task.
type Decision struct {
	Approved  bool
	Comment   string // the operator's words, may be empty
	DecidedAt time.Time
	By        string // who decided: the token's holder ("anonymous" without a name)
	Role      string // the token's role ("" when the API is open)
}
