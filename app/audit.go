package app

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/executor-dev/executor/domain/audit"
	"github.com/executor-dev/executor/domain/errcode"
	"github.com/executor-dev/executor/domain/plan"
)

// Anonymous is the actor of an action whose caller has no name (an open API, a token without
// a holder's name).
const Anonymous = "anonymous"

type originKey struct{}

// WithOrigin returns ctx carrying who asks for the actions taken with it (the API sets it
// from the caller's token and the request), for their audit records.
func WithOrigin(ctx context.Context, o audit.Origin) context.Context {
	return context.WithValue(ctx, originKey{}, o)
}

// originOf returns the origin ctx carries, its actor Anonymous when it names none.
func originOf(ctx context.Context) audit.Origin {
	o, _ := ctx.Value(originKey{}).(audit.Origin)
	if o.Actor == "" {
		o.Actor = Anonymous
	}
	return o
}

// action is an operator action about to be taken, for its audit record.
type action struct {
	name    string // audit.Fields.Action
	planID  string
	tenant  string
	taskID  string
	request []audit.Attr
	// created: the action creates its plan (a submission): refused, it leaves no record, as
	// the plan never existed.
	created bool
}

// attr is one audit attribute.
func attr(key, value string) audit.Attr { return audit.Attr{Key: key, Value: value} }

// attrInt is one audit attribute with an integer value.
func attrInt(key string, n int) audit.Attr { return attr(key, strconv.Itoa(n)) }

// audited takes action a (op) with its audit record: the record is stored first, and an
// error storing it is returned without taking the action (an action that took effect always
// has its record); then op runs, and its outcome is stored with the record: Applied with the
// attributes op reports, or Refused with the error's code. A failure to store the outcome
// does not undo the action: the record then reads Pending. Without an audit log (Deps.Audit
// nil) op simply runs.
func (s *Service) audited(ctx context.Context, a action, op func(context.Context) ([]audit.Attr, error)) error {
	if s.audit == nil {
		_, err := op(ctx)
		return err
	}
	if s.notReady() { // it takes no action before it reached its store (nor could record one)
		return ErrNotReady
	}
	rec, err := audit.New(audit.Fields{Origin: originOf(ctx), Action: a.name, PlanID: a.planID,
		Tenant: a.tenant, TaskID: a.taskID, Request: a.request}, s.now())
	if err != nil {
		return fmt.Errorf("app: audit record of %s: %w", a.name, err)
	}
	if err := s.audit.Append(ctx, rec); err != nil {
		return fmt.Errorf("app: audit record of %s, not stored: the action was not taken: %w", a.name, err)
	}
	attrs, opErr := op(ctx)
	o := audit.Outcome{Result: audit.Applied, At: s.now(), Attrs: attrs}
	if opErr != nil {
		o = audit.Outcome{Result: audit.Refused, At: s.now(), Code: codeOf(opErr),
			Attrs: []audit.Attr{attr("error", detailOf(opErr))}}
	}
	if opErr != nil && a.created {
		bg := context.WithoutCancel(ctx)
		if _, err := s.plans.Plan(bg, a.planID); errors.Is(err, plan.ErrNotFound) {
			_ = s.audit.Forget(bg, a.planID)
			return opErr
		}
	}
	if err := rec.Settle(o); err == nil {
		// The action is taken: its outcome is written even when the caller went away.
		_ = s.audit.Settle(context.WithoutCancel(ctx), rec)
	}
	return opErr
}

// detailOf is what a caller is told of err (errcode.Detail): which approvers clause refused
// a decision, which transition was not allowed.
func detailOf(err error) string {
	var c errcode.Coder
	if errors.As(err, &c) {
		if found, ok := errcode.Find(err, c.Code()); ok {
			return errcode.Detail(err, found)
		}
	}
	return err.Error()
}

// codeOf is the code of err as the API answers it: its errcode, or "error".
func codeOf(err error) string {
	var c errcode.Coder
	if errors.As(err, &c) {
		return string(c.Code())
	}
	return "error"
}
