package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/errcode"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/wire"
)

// requestError is an error of the HTTP exchange itself (an unknown route, a wrong method, an
// unsupported media type) rather than of the use case.
type requestError struct {
	status     int
	typ        string
	field      string
	detail     string
	retryAfter int // seconds of Retry-After, 0 for none
}

// Error returns the problem's detail.
func (e *requestError) Error() string { return e.detail }

// invalid is a 400 naming one field, in the same form as the app's validation errors.
func invalid(field, reason string) error {
	return &app.ValidationError{Violations: []app.FieldViolation{{Field: field, Reason: reason}}}
}

// writeError is the one error writer: it maps err to a problem and writes it. Errors it does
// not know are logged and answered with a generic 500, never with their text.
func (h *handlers) writeError(w http.ResponseWriter, r *http.Request, err error) {
	p := h.problemFor(r, err)
	setRetryAfter(w, err)
	h.writeBody(w, r, wire.ProblemContentType, p.Status, p)
}

func (h *handlers) problemFor(r *http.Request, err error) wire.Problem {
	var reqErr *requestError
	if errors.As(err, &reqErr) {
		p := newProblem(reqErr.status, reqErr.typ, reqErr.detail)
		if reqErr.field != "" {
			p.Field = reqErr.field
			p.Errors = []wire.FieldProblem{{Field: reqErr.field, Detail: reqErr.detail}}
		}
		return p
	}
	for _, k := range problemKinds {
		if found, ok := errcode.Find(err, k.code); ok {
			p := newProblem(k.status, k.typ, errcode.Detail(err, found))
			return h.enrich(r, err, k.code, p)
		}
	}
	if r.Context().Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		// The caller went away (a long poll it gave up on): not a server fault.
		h.opts.Logger.Debug("http request ended by the client",
			"request_id", requestIDOf(r), "method", r.Method, "path", r.URL.Path, "err", err)
		return newProblem(http.StatusServiceUnavailable, wire.ProblemUnavailable, "the request was cancelled")
	}
	return h.internalProblem(r, err)
}

// problemKinds is the one table from error codes (package errcode: each error says its code
// where it is defined) to HTTP answers, in precedence order: an error carrying several codes
// (one wrapped in another, or joined) is answered by the first listed.
var problemKinds = []struct {
	code   errcode.Code
	status int
	typ    string
}{
	{errcode.Invalid, http.StatusBadRequest, wire.ProblemInvalidInput},
	{errcode.IdempotencyMismatch, http.StatusUnprocessableEntity, wire.ProblemIdempotencyMismatch},
	{errcode.TenantConflict, http.StatusConflict, wire.ProblemTenantConflict},
	{errcode.Busy, http.StatusTooManyRequests, wire.ProblemBusy},
	{errcode.ClaimsPaused, http.StatusServiceUnavailable, wire.ProblemUnavailable},
	{errcode.NotReady, http.StatusServiceUnavailable, wire.ProblemUnavailable},
	{errcode.Unavailable, http.StatusServiceUnavailable, wire.ProblemUnavailable},
	{errcode.RegistryUnavailable, http.StatusServiceUnavailable, wire.ProblemUnavailable},
	{errcode.ShuttingDown, http.StatusServiceUnavailable, wire.ProblemUnavailable},
	{errcode.TaskNotEnded, http.StatusConflict, wire.ProblemTenantConflict},
	{errcode.TenantMovedOn, http.StatusConflict, wire.ProblemTenantConflict},
	{errcode.NotFound, http.StatusNotFound, wire.ProblemNotFound},
	{errcode.InvalidTransition, http.StatusConflict, wire.ProblemInvalidTransition},
	{errcode.Fenced, http.StatusConflict, wire.ProblemInvalidTransition},
	{errcode.Conflict, http.StatusConflict, wire.ProblemInvalidTransition},
	{errcode.Forbidden, http.StatusForbidden, wire.ProblemForbidden},
}

// newProblem is a problem of status and type typ saying detail.
func newProblem(status int, typ, detail string) wire.Problem {
	return wire.Problem{Type: typ, Title: http.StatusText(status), Status: status, Detail: detail}
}

// enrich adds to p, answering err found with code, what the problem's members carry beyond
// the detail: every violation of a validation error, the header an idempotency mismatch is
// about, the tenants of a conflict, why Redis is away.
func (h *handlers) enrich(r *http.Request, err error, code errcode.Code, p wire.Problem) wire.Problem {
	var (
		validation *app.ValidationError
		conflict   *app.ConflictError
		busy       *task.BusyError
	)
	switch code {
	case errcode.Invalid:
		if errors.As(err, &validation) && len(validation.Violations) > 0 {
			return validationProblem(validation.Violations, validation.Omitted)
		}
	case errcode.IdempotencyMismatch:
		p.Field = wire.IdempotencyKeyHeader
		p.Errors = []wire.FieldProblem{{Field: wire.IdempotencyKeyHeader, Detail: p.Detail}}
	case errcode.TenantConflict:
		if errors.As(err, &conflict) {
			p.Tenants = conflict.Tenants
		}
	case errcode.TenantMovedOn:
		if errors.As(err, &busy) {
			p.Tenants = busy.Tenants
		}
	case errcode.NotReady:
		p.Detail += reasonSuffix(h.opts.Readiness().Reason)
	case errcode.RegistryUnavailable:
		h.opts.Logger.Warn("executors not listed", "request_id", requestIDOf(r), "err", err)
		p.Detail += h.outageReason()
	case errcode.Unavailable:
		p.Detail += h.outageReason()
	}
	return p
}

// internalProblem answers an error no code covers: a 503 while Redis is away or refuses the
// executor (the request may succeed once it is back, or on an executor that reaches it: never
// a 500 for a Redis outage), naming why (the outage's reason, else the request's own Redis
// error: a refusal the executor has not noticed yet), else a 500 whose detail names the
// request id the server log has the error under.
func (h *handlers) internalProblem(r *http.Request, err error) wire.Problem {
	id := requestIDOf(r)
	if health := h.opts.Readiness(); (health.Redis == "degraded" || h.outage(err)) && !errors.Is(err, errPanic) {
		reason := health.Reason
		if reason == "" {
			reason = err.Error()
		}
		h.opts.Logger.Warn("http request failed while Redis is away",
			"request_id", id, "method", r.Method, "path", r.URL.Path, "err", err, "reason", reason)
		return newProblem(http.StatusServiceUnavailable, wire.ProblemUnavailable,
			"Redis is unavailable to this executor; try again"+reasonSuffix(reason))
	}
	h.opts.Logger.Error("http request failed",
		"request_id", id, "method", r.Method, "path", r.URL.Path, "err", err)
	return newProblem(http.StatusInternalServerError, wire.ProblemInternal,
		"internal error; the server log has the details under request id "+id)
}

// outage reports whether err is a store outage (Options.Unavailable).
func (h *handlers) outage(err error) bool {
	return h.opts.Unavailable != nil && h.opts.Unavailable(err)
}

// errPanic marks the error of a handler that panicked (recoverer): a bug, a 500 whatever
// Redis does.
var errPanic = errors.New("panic")

// outageReason is " (reason: <why Redis is away>)" while the executor runs degraded (see
// Options.Readiness), "" otherwise: appended to the detail of a 503 problem.
func (h *handlers) outageReason() string {
	if health := h.opts.Readiness(); health.Redis == "degraded" {
		return reasonSuffix(health.Reason)
	}
	return ""
}

func reasonSuffix(reason string) string {
	if reason == "" {
		return ""
	}
	return " (reason: " + reason + ")"
}

// validationProblem is a 400 listing every violation in errors (omitted more, not listed:
// errorsOmitted); the detail is the first, saying how many more there are.
func validationProblem(vs []app.FieldViolation, omitted int) wire.Problem {
	p := wire.Problem{
		Type: wire.ProblemInvalidInput, Title: http.StatusText(http.StatusBadRequest), Status: http.StatusBadRequest,
		Field: vs[0].Field, Errors: make([]wire.FieldProblem, len(vs)), ErrorsOmitted: omitted,
	}
	for i, v := range vs {
		p.Errors[i] = wire.FieldProblem{Field: v.Field, Detail: v.Reason}
	}
	p.Detail = vs[0].Field + ": " + vs[0].Reason
	switch more := len(vs) - 1 + omitted; {
	case omitted > 0:
		p.Detail += fmt.Sprintf(" (and %d more: %d listed in errors, %d not listed)", more, len(vs)-1, omitted)
	case more > 0:
		p.Detail += fmt.Sprintf(" (and %d more, listed in errors)", more)
	}
	return p
}
