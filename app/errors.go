package app

import (
	"errors"
	"strings"
)

// Sentinel errors; match them with errors.Is.
var (
	ErrInvalidInput = errors.New("app: invalid input")
	ErrConflict     = errors.New("app: tenant conflict")
	// ErrUnavailable: the executor runs degraded (Redis away) and was told to refuse new plans.
	ErrUnavailable = errors.New("app: redis is unreachable and this executor refuses new plans until it is back")
	// ErrMembersUnavailable: the registry of executors could not be read (Redis away).
	ErrMembersUnavailable = errors.New("app: the registry of executors is unreachable")
	// ErrNoEvents: the executor was wired without an event source.
	ErrNoEvents = errors.New("app: this executor publishes no events")
)

// FieldViolation names one invalid field of a request.
type FieldViolation struct {
	Field  string
	Reason string
}

// ValidationError lists what is wrong with a request. It matches ErrInvalidInput.
type ValidationError struct {
	Violations []FieldViolation
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = v.Field + ": " + v.Reason
	}
	return "invalid input: " + strings.Join(parts, "; ")
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
