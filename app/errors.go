package app

import (
	"errors"
	"fmt"
	"strings"

	"github.com/executor-dev/executor/domain/errcode"
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

// ConflictError lists the tenants whose latest task has not ended. It matches ErrConflict.
type ConflictError struct {
	Tenants []string
}

func (e *ConflictError) Error() string {
	return "tenants have a task that has not ended: " + strings.Join(e.Tenants, ", ")
}

// Unwrap returns ErrConflict.
func (e *ConflictError) Unwrap() error { return ErrConflict }

// Code is errcode.TenantConflict.
func (e *ConflictError) Code() errcode.Code { return errcode.TenantConflict }

// Detail is the error's own text, without the context that wraps it.
func (e *ConflictError) Detail() string { return e.Error() }
