package stage

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Class classifies a failure; it decides whether the orchestrator retries.
type Class string

// Failure classes (docs/design.md §3). TenantLocked is given when another run holds the tenant's lease;
// Shutdown when the executor shut down under the task.
const (
	ClassRetryable Class = "retryable"
	ClassPermanent Class = "permanent"
	ClassTimeout   Class = "timeout"
	// ClassAnalysis: an analysis' measurements failed past its failureLimit (the metrics said
	// the change is bad); retrying cannot change that.
	ClassAnalysis     Class = "analysis"
	ClassCancelled    Class = "cancelled"
	ClassLeaseLost    Class = "lease_lost"
	ClassFenced       Class = "fenced"
	ClassTenantLocked Class = "tenant_locked"
	// ClassShutdown: the executor shut down; the task stopped at a stage boundary, or its
	// stage was cancelled when the shutdown timeout ran out.
	ClassShutdown Class = "shutdown"
)

// Classes returns every failure class, in the order docs/api.md lists them.
func Classes() []Class {
	return []Class{ClassRetryable, ClassTimeout, ClassPermanent, ClassAnalysis, ClassCancelled, ClassLeaseLost,
		ClassFenced, ClassTenantLocked, ClassShutdown}
}

// Retryable reports whether a failure of this class may be attempted again.
func (c Class) Retryable() bool { return c == ClassRetryable || c == ClassTimeout }

// Error is a structured stage failure returned by handlers.
type Error struct {
	Class      Class
	Message    string
	Code       int           // remote status code, 0 when none applies
	RetryAfter time.Duration // a hint from the remote side; wins over the policy's backoff
	Err        error         // the underlying error, if any
}

func (e *Error) Error() string {
	if e.Code != 0 {
		return fmt.Sprintf("%s (status %d): %s", e.Class, e.Code, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Class, e.Message)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// MessageOf is what err says without its class: a *Error's Message, else err's text.
func MessageOf(err error) string {
	var se *Error
	if errors.As(err, &se) && se.Message != "" {
		return se.Message
	}
	return err.Error()
}

// Permanent marks err as a failure that must not be retried.
func Permanent(err error) *Error { return classed(ClassPermanent, err) }

// Retryable marks err as a transient failure.
func Retryable(err error) *Error { return classed(ClassRetryable, err) }

func classed(c Class, err error) *Error {
	return &Error{Class: c, Message: err.Error(), Err: err}
}

// AsError classifies any error: a *Error keeps its class, a deadline is a timeout, a
// cancellation is cancelled, and anything else is retryable.
func AsError(err error) *Error {
	var se *Error
	switch {
	case errors.As(err, &se) && se.Class == "":
		c := *se
		c.Class = ClassRetryable
		return &c
	case errors.As(err, &se):
		return se
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Class: ClassTimeout, Message: err.Error(), Err: err}
	case errors.Is(err, context.Canceled):
		return &Error{Class: ClassCancelled, Message: err.Error(), Err: err}
	default:
		return classed(ClassRetryable, err)
	}
}
