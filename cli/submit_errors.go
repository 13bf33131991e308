package cli

import (
	"errors"
	"fmt"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/wire"
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
		cause: err,
	}
}

// dryRunConflict is the conflict a dry run found, as the submission would be refused with it:
// the first tenants with the plan and status of the task holding each, and what to do.
func dryRunConflict(d wire.DryRun) *app.ConflictError {
	e := &app.ConflictError{Tenants: d.Conflicts}
	for _, c := range d.ConflictTasks {
		e.Holders = append(e.Holders, app.ConflictHolder{Tenant: c.TenantID, PlanID: c.PlanID, TaskID: c.TaskID, Status: task.Status(c.Status)})
	}
	return e
}

// submitNotices prints on stderr what a submission's answer says beside the plan: that it
// was replayed (the Idempotency-Key was seen before with the same plan), then its notes.
func (a *invocation) submitNotices(p wire.Plan, replayed bool) {
	if replayed {
		fmt.Fprintf(a.stderr, replayedNotice, p.PlanID)
	}
	a.notes(p.Warnings)
}

// notes prints on stderr, one "note: " line each, what the executor said of how a submitted
// plan will run that its request does not (wire.Plan.Warnings), -o json included: stdout
// keeps the answer alone.
func (a *invocation) notes(warnings []string) {
	for _, w := range warnings {
		fmt.Fprintln(a.stderr, "note: "+w)
	}
}
