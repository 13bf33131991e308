package cli

import (
	"context"
	"fmt"
	"io"
)

// exitError is a failure with an exit status of its own: Main prints "error: <msg>", then
// each hint on a line of its own, and returns code.
type exitError struct {
	code  int
	msg   string
	hints []string
}

func (e *exitError) Error() string { return e.msg }

// print writes the error line and the hints.
func (e *exitError) print(w io.Writer) {
	fmt.Fprintf(w, "error: %s\n", oneLine(e.msg))
	for _, h := range e.hints {
		fmt.Fprintf(w, "  %s\n", oneLine(h))
	}
}

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
