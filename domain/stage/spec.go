package stage

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// NamePattern is what a stage name must match: it names the stage's output in templates and in
// idempotency keys, so it is restricted like an ID.
var NamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ErrInvalidSpec is returned (wrapped in a *FieldError) when a Spec breaks an invariant.
var ErrInvalidSpec = errors.New("invalid stage spec")

// Spec is one stage of a plan's template. Params' string values are templates rendered per tenant.
type Spec struct {
	Name    string
	Kind    string
	Params  map[string]any
	Timeout time.Duration // 0: no per-stage timeout
	Retry   Policy
	// Undo is the stage's compensation, or nil: what a rollback of a task runs for this stage
	// once it completed (newest first), to put the tenant back as it was before it. It is a
	// stage like any other (kind, params, timeout, retry), named after the stage it undoes,
	// whose templates also read the outputs of the stages still applied (its own stage's
	// included). An undo has no undo.
	Undo *Spec
	// Approvers is who may decide at the stage, a gate (the approval kind), and how many
	// approvals pass it; nil: any operator, one approval (or the plan's rule, which a
	// submission copies onto its gates that have none).
	Approvers *Approvers
}

// UndoPrefix begins the name an undo's attempts are called by (stage.Request.Stage, the
// idempotency key, EXECUTOR_STAGE): "undo:<stage>", a key space of its own, since no stage
// name holds a ':'.
const UndoPrefix = "undo:"

// FieldError names the field of a spec or plan that is invalid.
type FieldError struct {
	Field  string
	Reason string
	Err    error // the sentinel the error matches with errors.Is
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

// Unwrap returns the sentinel error.
func (e *FieldError) Unwrap() error { return e.Err }

// Validate checks the spec's invariants and returns its policy with defaults filled in.
// field is the path of the spec in its document, for example "stages[2]".
func (s Spec) Validate(field string) (Spec, error) {
	if !NamePattern.MatchString(s.Name) {
		return s, &FieldError{Field: field + ".name", Reason: fmt.Sprintf("must match %s", NamePattern), Err: ErrInvalidSpec}
	}
	if s.Kind == "" {
		return s, &FieldError{Field: field + ".kind", Reason: "is required", Err: ErrInvalidSpec}
	}
	if s.Timeout < 0 {
		return s, &FieldError{Field: field + ".timeout", Reason: "must not be negative", Err: ErrInvalidSpec}
	}
	p, err := s.Retry.withDefaults(field + ".retry")
	if err != nil {
		return s, err
	}
	s.Retry = p
	if err := s.Approvers.Validate(field + ".approvers"); err != nil {
		return s, err
	}
	if s.Undo != nil {
		u := *s.Undo
		if u.Undo != nil {
			return s, &FieldError{Field: field + ".undo.undo", Reason: "an undo has no undo", Err: ErrInvalidSpec}
		}
		if u.Name == "" {
			u.Name = s.Name
		}
		if u.Name != s.Name {
			return s, &FieldError{Field: field + ".undo.name", Reason: "an undo is named after its stage (" + s.Name + ")", Err: ErrInvalidSpec}
		}
		checked, err := u.Validate(field + ".undo")
		if err != nil {
			return s, err
		}
		s.Undo = &checked
	}
	return s, nil
}

// Templated reports whether any param is a template (holds "{{"): only those read earlier
// stages' outputs, in any way (.Outputs, index, json of the whole data).
func (s Spec) Templated() bool {
	return anyString(s.Params, func(v string) bool { return strings.Contains(v, "{{") })
}

// UsesOutputs reports whether any param template reads .Outputs: such params cannot be fully
// known before earlier stages ran, so their kind-specific checks wait until run time.
func (s Spec) UsesOutputs() bool {
	return anyString(s.Params, func(v string) bool {
		return strings.Contains(v, "{{") && strings.Contains(v, ".Outputs")
	})
}

// anyString reports whether pred holds for any string in v (a param value: nested maps and
// lists are searched).
func anyString(v any, pred func(string) bool) bool {
	switch v := v.(type) {
	case string:
		return pred(v)
	case map[string]any:
		for _, e := range v {
			if anyString(e, pred) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if anyString(e, pred) {
				return true
			}
		}
	}
	return false
}
