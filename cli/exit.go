package cli

import (
	"context"
	"fmt"
)

// exitError is a failure with an exit status of its own: Main prints "error: <msg>", then
// each hint on a line of its own, and returns code. kind names the failure in an error
// document (-o json, yaml; default: after code, failureKind); cause, when set, is the error it
// reports (a remote error: its problem is the document's).
type exitError struct {
	code  int
	msg   string
	hints []string
	kind  string
	cause error
}

func (e *exitError) Error() string { return e.msg }

// Unwrap returns the error e reports, if any.
func (e *exitError) Unwrap() error { return e.cause }

// waitInterrupted is err of a wait on plan id, or, when ctx ended (Ctrl-C), ExitInterrupted
// with the plan's id and how to follow it: the plan goes on without the command.
func waitInterrupted(ctx context.Context, id string, submitted bool, err error) error {
	if ctx.Err() == nil {
		return err
	}
	what := "plan " + id
	if submitted {
		what += " submitted"
	}
	return &exitError{
		code: ExitInterrupted,
		msg:  fmt.Sprintf("interrupted: %s; still running: executor plan show %s --watch", what, id),
	}
}
