package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// ProblemContentType is the media type of every error response.
const ProblemContentType = "application/problem+json"

// Problem types: the "type" member of a Problem, one per error class (docs/api.md).
const (
	ProblemInvalidInput         = "urn:executor:problem:invalid-input"          // 400
	ProblemUnauthorized         = "urn:executor:problem:unauthorized"           // 401, with WWW-Authenticate
	ProblemForbidden            = "urn:executor:problem:forbidden"              // 403
	ProblemNotFound             = "urn:executor:problem:not-found"              // 404
	ProblemMethodNotAllowed     = "urn:executor:problem:method-not-allowed"     // 405
	ProblemTenantConflict       = "urn:executor:problem:tenant-conflict"        // 409, with tenants
	ProblemInvalidTransition    = "urn:executor:problem:invalid-transition"     // 409
	ProblemPayloadTooLarge      = "urn:executor:problem:payload-too-large"      // 413
	ProblemUnsupportedMediaType = "urn:executor:problem:unsupported-media-type" // 415
	ProblemIdempotencyMismatch  = "urn:executor:problem:idempotency-mismatch"   // 422, field Idempotency-Key
	ProblemBusy                 = "urn:executor:problem:busy"                   // 429, with Retry-After
	ProblemUnavailable          = "urn:executor:problem:unavailable"            // 503
	ProblemInternal             = "urn:executor:problem:internal"               // 500
)

// requestError is an error of the HTTP exchange itself (an unknown route, a wrong method, an
// unsupported media type) rather than of the use case.
type requestError struct {
	status int
	typ    string
	field  string
	detail string
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
	h.writeBody(w, r, ProblemContentType, p.Status, p)
}

func (h *handlers) problemFor(r *http.Request, err error) Problem {
	var (
		reqErr     *requestError
		tooLarge   *http.MaxBytesError
		validation *app.ValidationError
		conflict   *app.ConflictError
		mismatch   *app.IdempotencyMismatchError
		busy       *task.BusyError
		paused     *task.ClaimsPausedError
	)
	problem := func(status int, typ, detail string) Problem {
		return Problem{Type: typ, Title: http.StatusText(status), Status: status, Detail: detail}
	}
	switch {
	case errors.As(err, &reqErr):
		p := problem(reqErr.status, reqErr.typ, reqErr.detail)
		if reqErr.field != "" {
			p.Field = reqErr.field
			p.Errors = []FieldProblem{{Field: reqErr.field, Detail: reqErr.detail}}
		}
		return p
	case errors.As(err, &tooLarge):
		return problem(http.StatusRequestEntityTooLarge, ProblemPayloadTooLarge,
			fmt.Sprintf("the request body is larger than %d bytes", tooLarge.Limit))
	case errors.As(err, &validation) && len(validation.Violations) > 0:
		return validationProblem(validation.Violations, validation.Omitted)
	case errors.As(err, &mismatch):
		p := problem(http.StatusUnprocessableEntity, ProblemIdempotencyMismatch, mismatch.Error())
		p.Field = IdempotencyKeyHeader
		p.Errors = []FieldProblem{{Field: IdempotencyKeyHeader, Detail: mismatch.Error()}}
		return p
	case errors.Is(err, app.ErrInvalidInput):
		return problem(http.StatusBadRequest, ProblemInvalidInput, err.Error())
	case errors.As(err, &conflict):
		p := problem(http.StatusConflict, ProblemTenantConflict, conflict.Error())
		p.Tenants = conflict.Tenants
		return p
	case errors.Is(err, app.ErrBusy):
		return problem(http.StatusTooManyRequests, ProblemBusy, err.Error())
	case errors.As(err, &paused):
		return problem(http.StatusServiceUnavailable, ProblemUnavailable,
			fmt.Sprintf("new tenant claims wait %v: %s", paused.RetryAfter.Round(time.Second), paused.Reason))
	case errors.Is(err, app.ErrNotReady):
		return problem(http.StatusServiceUnavailable, ProblemUnavailable, err.Error()+reasonSuffix(h.opts.Readiness().Reason))
	case errors.Is(err, app.ErrDegraded):
		return problem(http.StatusServiceUnavailable, ProblemUnavailable, err.Error()+h.outageReason())
	case errors.Is(err, app.ErrUnavailable):
		return problem(http.StatusServiceUnavailable, ProblemUnavailable, err.Error()+h.outageReason())
	case errors.Is(err, app.ErrMembersUnavailable):
		h.opts.Logger.Warn("executors not listed", "request_id", requestIDOf(r), "err", err)
		return problem(http.StatusServiceUnavailable, ProblemUnavailable,
			"the registry of executors is unreachable (Redis away?); try again"+h.outageReason())
	case errors.Is(err, app.ErrShuttingDown):
		return problem(http.StatusServiceUnavailable, ProblemUnavailable,
			"the executor is shutting down and takes no new work; submit to another executor or after its restart")
	case errors.Is(err, app.ErrConflict):
		return problem(http.StatusConflict, ProblemTenantConflict, "a tenant has a task that has not ended")
	case errors.As(err, &busy):
		p := problem(http.StatusConflict, ProblemTenantConflict, "the tenant has moved on to another task")
		p.Tenants = busy.Tenants
		return p
	case errors.Is(err, app.ErrNoEvents):
		return problem(http.StatusNotFound, ProblemNotFound, err.Error())
	case errors.Is(err, plan.ErrNotFound):
		return problem(http.StatusNotFound, ProblemNotFound, "plan not found")
	case errors.Is(err, task.ErrNotFound):
		return problem(http.StatusNotFound, ProblemNotFound, "task not found")
	case errors.Is(err, checkpoint.ErrNotFound):
		return problem(http.StatusNotFound, ProblemNotFound, "the task has no checkpoint yet")
	case errors.Is(err, plan.ErrInvalidTransition), errors.Is(err, task.ErrInvalidTransition):
		return problem(http.StatusConflict, ProblemInvalidTransition, transitionDetail(err))
	case errors.Is(err, task.ErrFenced):
		return problem(http.StatusConflict, ProblemInvalidTransition, "a newer run owns the task; try again")
	case errors.Is(err, task.ErrConflict), errors.Is(err, plan.ErrConflict):
		return problem(http.StatusConflict, ProblemInvalidTransition, "changed by others many times meanwhile; try again")
	case r.Context().Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		// The caller went away (a long poll it gave up on): not a server fault.
		h.opts.Logger.Debug("http request ended by the client",
			"request_id", requestIDOf(r), "method", r.Method, "path", r.URL.Path, "err", err)
		return problem(http.StatusServiceUnavailable, ProblemUnavailable, "the request was cancelled")
	default:
		id := requestIDOf(r)
		if health := h.opts.Readiness(); (health.Redis == "degraded" || h.outage(err)) && !errors.Is(err, errPanic) {
			// Redis is away (unreachable, out of memory, read-only…): a failure now is the
			// outage's, and the request may succeed once Redis is back, or on an executor that
			// reaches it. Never a 500 for a Redis outage.
			h.opts.Logger.Warn("http request failed while Redis is away",
				"request_id", id, "method", r.Method, "path", r.URL.Path, "err", err, "reason", health.Reason)
			return problem(http.StatusServiceUnavailable, ProblemUnavailable,
				"Redis is unavailable and this executor runs degraded; try again"+reasonSuffix(health.Reason))
		}
		h.opts.Logger.Error("http request failed",
			"request_id", id, "method", r.Method, "path", r.URL.Path, "err", err)
		return problem(http.StatusInternalServerError, ProblemInternal,
			"internal error; the server log has the details under request id "+id)
	}
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
func validationProblem(vs []app.FieldViolation, omitted int) Problem {
	p := Problem{
		Type: ProblemInvalidInput, Title: http.StatusText(http.StatusBadRequest), Status: http.StatusBadRequest,
		Field: vs[0].Field, Errors: make([]FieldProblem, len(vs)), ErrorsOmitted: omitted,
	}
	for i, v := range vs {
		p.Errors[i] = FieldProblem{Field: v.Field, Detail: v.Reason}
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

// transitionDetail is the domain's own description of a refused transition ("cannot pause a
// COMPLETED plan"), without the wrapping context of lower layers.
func transitionDetail(err error) string {
	var pe *plan.TransitionError
	if errors.As(err, &pe) {
		return pe.Error()
	}
	var te *task.TransitionError
	if errors.As(err, &te) {
		return te.Error()
	}
	var re *plan.RingError
	if errors.As(err, &re) {
		return re.Error()
	}
	return "the operation is not allowed in the current state"
}
