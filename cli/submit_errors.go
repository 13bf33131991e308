package cli

import (
	"errors"
	"fmt"

	"github.com/executor-dev/executor/client"
)

// replayedNotice is what submit prints on stderr when the executor answered with the plan
// first submitted with the same Idempotency-Key and the same content.
const replayedNotice = "plan %s replayed: this Idempotency-Key was submitted before with the same plan; nothing new was started\n"

// submitError is how submit reports a refused submission, whatever -o says (errors go to
// stderr, stdout stays empty, as for every command): a problem listing more than one invalid
// field is an error whose line says how many, followed by every field on a line of its own,
// "stages[0].params.url: <detail>" (and how many the executor did not list); any other error
// is returned as is.
func (a *invocation) submitError(err error) error {
	var ce *client.Error
	if !errors.As(err, &ce) {
		return err
	}
	p := ce.Problem
	if len(p.Errors) < 2 && p.ErrorsOmitted == 0 {
		return err
	}
	n := len(p.Errors) + p.ErrorsOmitted
	hints := make([]string, 0, len(p.Errors)+1)
	for _, e := range p.Errors {
		hints = append(hints, e.Field+": "+e.Detail)
	}
	if p.ErrorsOmitted > 0 {
		hints = append(hints, fmt.Sprintf("... and %d more, not listed by the executor", p.ErrorsOmitted))
	}
	return &exitError{
		code:  ExitFailure,
		msg:   fmt.Sprintf("%d %s: the plan has %d invalid fields:", ce.Status, p.Title, n),
		hints: hints,
	}
}
