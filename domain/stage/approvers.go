package stage

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// ErrForbidden is matched (errors.Is) by a *ForbiddenError: a decision its gate's or plan's
// approvers rule does not allow.
var ErrForbidden = errors.New("stage: decision not allowed by the approvers rule")

// ErrAlreadyApproved: the approver already approved this gate (or ring); a rule asking for
// several approvals counts distinct approvers.
var ErrAlreadyApproved = errors.New("stage: already approved by this approver: the rule asks for approvals by distinct approvers")

// MaxApprovers bounds the roles and the names of a rule, and its count.
const MaxApprovers = 16

// approverPattern is what a rule's role or name must match (a token holder's name).
var approverPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`)

// Approvers is who may decide at a gate (an approval stage) or on a plan's rings, and how
// many approvals pass it. The zero value (or nil) lets any operator decide alone.
type Approvers struct {
	// Roles: a decision counts only from a token of one of these roles; empty: any role
	// that may decide.
	Roles []string
	// Names: a decision counts only from one of these token holders; empty: anyone.
	Names []string
	// Count is how many distinct approvers must approve (0 or 1: one). One rejection by an
	// allowed approver rejects at once.
	Count int
	// NotSubmitter: the plan's submitter may not decide.
	NotSubmitter bool
	// Submitter is who submitted the plan (the token's holder), set with the plan: what
	// NotSubmitter compares a decision's actor with.
	Submitter string
}

// ForbiddenError is a decision the rule does not allow; Rule names the clause it failed.
type ForbiddenError struct {
	Rule string // e.g. "approvers.notSubmitter: bob submitted the plan"
}

func (e *ForbiddenError) Error() string { return "the decision is not allowed by " + e.Rule }

// Unwrap returns ErrForbidden.
func (e *ForbiddenError) Unwrap() error { return ErrForbidden }

// Needed is how many approvals pass: Count, at least 1. A nil rule needs one.
func (a *Approvers) Needed() int {
	if a == nil || a.Count < 1 {
		return 1
	}
	return a.Count
}

// Validate checks the rule; field is its path ("approvers", "stages[2].approvers").
func (a *Approvers) Validate(field string) error {
	if a == nil {
		return nil
	}
	bad := func(sub, reason string) error {
		return &FieldError{Field: field + sub, Reason: reason, Err: ErrInvalidSpec}
	}
	switch {
	case a.Count < 0 || a.Count > MaxApprovers:
		return bad(".count", fmt.Sprintf("must be between 1 and %d", MaxApprovers))
	case len(a.Roles) > MaxApprovers:
		return bad(".roles", fmt.Sprintf("must list at most %d roles", MaxApprovers))
	case len(a.Names) > MaxApprovers:
		return bad(".names", fmt.Sprintf("must list at most %d names", MaxApprovers))
	case len(a.Names) > 0 && a.Needed() > len(a.Names):
		return bad(".count", fmt.Sprintf("asks for %d approvals from %d names: it could never pass", a.Needed(), len(a.Names)))
	}
	for list, values := range map[string][]string{".roles": a.Roles, ".names": a.Names} {
		for i, v := range values {
			if !approverPattern.MatchString(v) {
				return bad(fmt.Sprintf("%s[%d]", list, i), "must match "+approverPattern.String())
			}
			if j := slices.Index(values, v); j < i {
				return bad(fmt.Sprintf("%s[%d]", list, i), fmt.Sprintf("duplicates %s[%d] %q", list[1:], j, v))
			}
		}
	}
	return nil
}

// Allow checks a decision by actor (role): nil when the rule lets them decide, else a
// *ForbiddenError naming the clause. A nil rule allows anyone.
func (a *Approvers) Allow(actor, role string) error {
	if a == nil {
		return nil
	}
	switch {
	case len(a.Roles) > 0 && !slices.Contains(a.Roles, role):
		return &ForbiddenError{Rule: fmt.Sprintf("approvers.roles: %s decides with role %q, not one of %s", actor, role, strings.Join(a.Roles, ", "))}
	case len(a.Names) > 0 && !slices.Contains(a.Names, actor):
		return &ForbiddenError{Rule: fmt.Sprintf("approvers.names: %s is not one of %s", actor, strings.Join(a.Names, ", "))}
	case a.NotSubmitter && actor == a.Submitter:
		return &ForbiddenError{Rule: fmt.Sprintf("approvers.notSubmitter: %s submitted the plan", actor)}
	}
	return nil
}

// Allows checks decision d (its By and Role) against the rule: Allow.
func (a *Approvers) Allows(d Decision) error { return a.Allow(d.By, d.Role) }
