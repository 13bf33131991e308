package errcode

// Code is a kind of failure a caller can act on.
type Code string

// The codes, one per way a caller reacts.
const (
	// Invalid: the request is malformed or names something wrongly; fix it and send again.
	Invalid Code = "invalid"
	// IdempotencyMismatch: an Idempotency-Key was used for another request.
	IdempotencyMismatch Code = "idempotency-mismatch"
	// TenantConflict: a submission names tenants whose latest task has not ended.
	TenantConflict Code = "tenant-conflict"
	// Busy: the executor's queue is full; try again later.
	Busy Code = "busy"
	// ClaimsPaused: new tenant claims are paused for a while (the store cannot count them).
	ClaimsPaused Code = "claims-paused"
	// NotReady: the executor has not reached its store since it started.
	NotReady Code = "not-ready"
	// Unavailable: the store is away and the executor cannot do this meanwhile.
	Unavailable Code = "unavailable"
	// RegistryUnavailable: the registry of executors cannot be read (the store is away).
	RegistryUnavailable Code = "registry-unavailable"
	// ShuttingDown: the executor is shutting down and takes no new work.
	ShuttingDown Code = "shutting-down"
	// TaskNotEnded: a tenant has a task that has not ended.
	TaskNotEnded Code = "task-not-ended"
	// TenantMovedOn: the tenant has moved on to another task.
	TenantMovedOn Code = "tenant-moved-on"
	// NotFound: what the request names does not exist (or no longer).
	NotFound Code = "not-found"
	// InvalidTransition: the aggregate's state does not allow the operation.
	InvalidTransition Code = "invalid-transition"
	// Fenced: a newer run owns the task.
	Fenced Code = "fenced"
	// Conflict: another writer changed the aggregate meanwhile, more often than retried.
	Conflict Code = "conflict"
	// Forbidden: the caller may not do this (an approvers rule does not let them decide).
	Forbidden Code = "forbidden"
)

// All lists every code, in the order declared (a test fails when one is declared without
// being listed; a transport's table is checked against it).
var All = []Code{
	Invalid, IdempotencyMismatch, TenantConflict, Busy, ClaimsPaused, NotReady, Unavailable,
	RegistryUnavailable, ShuttingDown, TaskNotEnded, TenantMovedOn, NotFound, InvalidTransition,
	Fenced, Conflict, Forbidden,
}

// ErrShuttingDown: the executor is shutting down and starts no more work (a new plan, a
// retry, a resume, an approval, a scheduled start). The one error of a shutdown, whichever
// layer refuses: the use cases before they act, the orchestrator once its shutdown began.
var ErrShuttingDown = WithDetail(ShuttingDown, "executor: shutting down and takes no new work",
	"the executor is shutting down and takes no new work; submit to another executor or after its restart")

// Coder is an error carrying a code. Typed errors implement it with a method; sentinels are
// made with New or WithDetail.
type Coder interface {
	error
	Code() Code
}

// Detailer is a Coder with its own text for a caller, which Detail prefers to the whole
// error's.
type Detailer interface {
	Detail() string
}

// Error is a sentinel error with a code. Compare it with errors.Is, as any sentinel.
type Error struct {
	code   Code
	msg    string
	detail string
}

// New returns a sentinel error with message msg and code c; a caller is told the text of the
// whole error it is found in.
func New(c Code, msg string) *Error { return &Error{code: c, msg: msg} }

// WithDetail is New with detail as what a caller is told, whatever wraps the error.
func WithDetail(c Code, msg, detail string) *Error { return &Error{code: c, msg: msg, detail: detail} }

// Error returns the message.
func (e *Error) Error() string { return e.msg }

// Code returns the code.
func (e *Error) Code() Code { return e.code }

// Detail returns the detail a caller is told, "" when it is the whole error's text.
func (e *Error) Detail() string { return e.detail }

// Find returns the first error in err's tree (depth first, as errors.As walks it) carrying
// code c.
func Find(err error, c Code) (Coder, bool) {
	for err != nil {
		if ce, ok := err.(Coder); ok && ce.Code() == c {
			return ce, true
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if found, ok := Find(e, c); ok {
					return found, true
				}
			}
			return nil, false
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		default:
			return nil, false
		}
	}
	return nil, false
}

// Detail is what a caller is told of err, found carrying code c as found: found's own
// detail, else err's whole text.
func Detail(err error, found Coder) string {
	if d, ok := found.(Detailer); ok && d.Detail() != "" {
		return d.Detail()
	}
	return err.Error()
}

var _ Coder = (*Error)(nil)

// coded is an error of a package that cannot import errcode (domain/stage), given a code by
// one that can.
type coded struct {
	code   Code
	err    error
	detail string
}

// Coded returns err with code c: errors.Is and errors.As see err through it, and a caller is
// told detail whatever wraps it ("": err's own text). Nil for a nil err.
func Coded(c Code, err error, detail string) error {
	if err == nil {
		return nil
	}
	if detail == "" {
		detail = err.Error()
	}
	return &coded{code: c, err: err, detail: detail}
}

func (e *coded) Error() string  { return e.err.Error() }
func (e *coded) Code() Code     { return e.code }
func (e *coded) Detail() string { return e.detail }
func (e *coded) Unwrap() error  { return e.err }
