package app

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/executor-dev/executor/domain/errcode"
	"github.com/executor-dev/executor/domain/task"
)

// Sentinel errors; match them with errors.Is.
var (
	ErrInvalidInput = errcode.New(errcode.Invalid, "app: invalid input")
	ErrConflict     = errcode.WithDetail(errcode.TaskNotEnded, "app: tenant conflict", "a tenant has a task that has not ended")
	// ErrUnavailable: the executor shares its Redis with other executors and cannot reach it now,
	// so it takes no new plan (another executor may deploy its tenants).
	ErrUnavailable = errcode.New(errcode.Unavailable, "app: redis is unreachable and this executor refuses new plans until it is back")
	// ErrMembersUnavailable: the registry of executors could not be read (Redis away).
	ErrMembersUnavailable = errcode.WithDetail(errcode.RegistryUnavailable, "app: the registry of executors is unreachable",
		"the registry of executors is unreachable (Redis away?); try again")
	// ErrNoEvents: the executor was wired without an event source.
	ErrNoEvents = errcode.New(errcode.NotFound, "app: this executor publishes no events")
	// ErrIdempotencyMismatch: an Idempotency-Key was submitted before with another plan
	// (IdempotencyMismatchError).
	ErrIdempotencyMismatch = errors.New("app: the Idempotency-Key was used for another plan")
)

// IdempotencyMismatchError is a submission whose Idempotency-Key was submitted before with
// another content: nothing is created, and the first plan is not replayed. It matches
// ErrIdempotencyMismatch.
type IdempotencyMismatchError struct {
	Key    string // the Idempotency-Key
	PlanID string // the plan first submitted with it
}

func (e *IdempotencyMismatchError) Error() string {
	return fmt.Sprintf("Idempotency-Key %q was submitted before with another plan (plan %s): "+
		"use a new key for a new plan, or send the first plan's exact content to get it back", e.Key, e.PlanID)
}

// Unwrap returns ErrIdempotencyMismatch.
func (e *IdempotencyMismatchError) Unwrap() error { return ErrIdempotencyMismatch }

// Code is errcode.IdempotencyMismatch.
func (e *IdempotencyMismatchError) Code() errcode.Code { return errcode.IdempotencyMismatch }

// Detail is the error's own text, without the context that wraps it.
func (e *IdempotencyMismatchError) Detail() string { return e.Error() }

// MaxViolations bounds the violations one ValidationError lists; the others are only counted
// (Omitted). A plan of 10,000 tenants with a template that fails for each would otherwise
// answer with 10,000 of them.
const MaxViolations = 100

// FieldViolation names one invalid field of a request.
type FieldViolation struct {
	Field  string
	Reason string
}

// ValidationError lists what is wrong with a request. It matches ErrInvalidInput.
type ValidationError struct {
	Violations []FieldViolation
	Omitted    int // violations found beyond MaxViolations, not listed
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = v.Field + ": " + v.Reason
	}
	s := "invalid input: " + strings.Join(parts, "; ")
	if e.Omitted > 0 {
		s += fmt.Sprintf(" (and %d more not listed)", e.Omitted)
	}
	return s
}

// Unwrap returns ErrInvalidInput.
func (e *ValidationError) Unwrap() error { return ErrInvalidInput }

func invalid(field, reason string) *ValidationError {
	return &ValidationError{Violations: []FieldViolation{{Field: field, Reason: reason}}}
}

// MaxConflictsNamed bounds the conflicting tenants a ConflictError describes (the plan and
// status of their task); the others are counted ("and 3 more"), and listed in Tenants.
const MaxConflictsNamed = 5

// ConflictHolder is the task that holds a conflicting tenant: its latest task, which has not ended.
type ConflictHolder struct {
	Tenant string
	PlanID string
	TaskID string
	Status task.Status
}

// ConflictError lists the tenants whose latest task has not ended. It matches ErrConflict.
type ConflictError struct {
	Tenants []string
	// Holders are the tasks of the first tenants (at most MaxConflictsNamed, in Tenants'
	// order) that could be read: the message names their plans and statuses.
	Holders []ConflictHolder
}

// Error names the first tenants with the plan and status of the task holding each, counts the
// others, and says what to do: wait, or cancel those tasks.
func (e *ConflictError) Error() string {
	held := make(map[string]ConflictHolder, len(e.Holders))
	for _, h := range e.Holders {
		held[h.Tenant] = h
	}
	n := min(len(e.Tenants), MaxConflictsNamed)
	names := make([]string, n)
	var plans []string
	for i, tenant := range e.Tenants[:n] {
		h, ok := held[tenant]
		if !ok {
			names[i] = "tenant " + tenant
			continue
		}
		names[i] = fmt.Sprintf("tenant %s (plan %s, %s)", tenant, h.PlanID, h.Status)
		if !slices.Contains(plans, h.PlanID) {
			plans = append(plans, h.PlanID)
		}
	}
	s := "tenants have a task that has not ended: " + strings.Join(names, ", ")
	if more := len(e.Tenants) - n; more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	if n == 0 {
		return s
	}
	s += fmt.Sprintf("; wait until those tasks end, or cancel them: 'executor cancel --tenant %s' for one tenant", e.Tenants[0])
	if len(plans) > 0 {
		s += fmt.Sprintf(", 'executor plan bulk cancel %s --tenant PREFIX' for those of a plan", plans[0])
	}
	return s
}

// Unwrap returns ErrConflict.
func (e *ConflictError) Unwrap() error { return ErrConflict }

// Code is errcode.TenantConflict.
func (e *ConflictError) Code() errcode.Code { return errcode.TenantConflict }

// Detail is the error's own text, without the context that wraps it.
func (e *ConflictError) Detail() string { return e.Error() }
