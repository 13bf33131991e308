package audit

import (
	"errors"
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"
)

// Errors of the audit trail.
var (
	// ErrInvalid: a record lacks its action or actor, or names no plan nor tenant.
	ErrInvalid = errors.New("audit: invalid record")
	// ErrSettled: the record's outcome was set already.
	ErrSettled = errors.New("audit: outcome already set")
)

// Bounds of one record.
const (
	// MaxText bounds each text a record holds (a comment, a filter): longer ones are cut,
	// marked with "…".
	MaxText = 1024
	// MaxAttrs bounds the attributes of a request or an outcome.
	MaxAttrs = 16
)

// Result is how an action ended.
type Result string

// Results of an action.
const (
	// Pending: the action's outcome was not recorded (its executor stopped meanwhile).
	Pending Result = ""
	// Applied: the action took effect.
	Applied Result = "applied"
	// Refused: the action was refused (Outcome.Code says why); it changed nothing.
	Refused Result = "refused"
)

// Attr is one named value of a request or an outcome, in the order the action gave them.
type Attr struct {
	Key, Value string
}

// Origin is who asked for an action, and through which executor.
type Origin struct {
	Actor     string // the token's holder; "anonymous" without a name or without tokens
	Role      string // the token's role; "" when the API is open
	RequestID string // the request's X-Request-ID
	Executor  string // the executor that took the request
}

// Fields are a record's contents, as stored.
type Fields struct {
	ID      string // a ULID: the record's identity, made by New
	At      time.Time
	Origin  Origin
	Action  string // submit, pause, resume, cancel, retry, rollback, approve, reject, unlock, bulk-<action>, …
	PlanID  string // the plan the action touched; "" for an unlock of a tenant without a task
	Tenant  string // the tenant it touched; "" for a plan-wide action
	TaskID  string // the tenant's task, when it touched one
	Request []Attr // what was asked beyond the target: a filter, fromCheckpoint, a comment, …
}

// Outcome is what came of an action.
type Outcome struct {
	Result Result
	At     time.Time
	Code   string // why it was refused (an errcode.Code, "forbidden"); "" when applied
	Attrs  []Attr // what the action reported: counts, the status after, …
}

// Record is one operator action.
type Record struct {
	f       Fields
	outcome Outcome
}

// New makes the record of an action asked for at at: f's ID is made here, its texts bounded.
func New(f Fields, at time.Time) (*Record, error) {
	f.ID = ulid.MustNew(ulid.Timestamp(at), ulid.DefaultEntropy()).String()
	f.At = at.UTC()
	return Load(f, Outcome{})
}

// Load returns a stored record, its invariants checked again.
func Load(f Fields, o Outcome) (*Record, error) {
	switch {
	case f.Action == "":
		return nil, fmt.Errorf("%w: no action", ErrInvalid)
	case f.Origin.Actor == "":
		return nil, fmt.Errorf("%w: no actor", ErrInvalid)
	case f.PlanID == "" && f.Tenant == "":
		return nil, fmt.Errorf("%w: names no plan nor tenant", ErrInvalid)
	}
	if _, err := ulid.ParseStrict(f.ID); err != nil {
		return nil, fmt.Errorf("%w: id %q: %v", ErrInvalid, f.ID, err)
	}
	switch o.Result {
	case Pending, Applied, Refused:
	default:
		return nil, fmt.Errorf("%w: result %q", ErrInvalid, o.Result)
	}
	f.Request = bounded(f.Request)
	o.Attrs = bounded(o.Attrs)
	o.Code = cut(o.Code)
	return &Record{f: f, outcome: o}, nil
}

// Settle sets the action's outcome, once.
func (r *Record) Settle(o Outcome) error {
	if r.outcome.Result != Pending {
		return ErrSettled
	}
	if o.Result == Pending {
		return fmt.Errorf("%w: an outcome must be applied or refused", ErrInvalid)
	}
	o.At = o.At.UTC()
	o.Attrs = bounded(o.Attrs)
	o.Code = cut(o.Code)
	r.outcome = o
	return nil
}

// ID is the record's identity (a ULID: records made later sort later).
func (r *Record) ID() string { return r.f.ID }

// Fields returns the record's contents.
func (r *Record) Fields() Fields {
	f := r.f
	f.Request = append([]Attr(nil), r.f.Request...)
	return f
}

// Outcome returns what came of the action (Pending until Settle).
func (r *Record) Outcome() Outcome {
	o := r.outcome
	o.Attrs = append([]Attr(nil), r.outcome.Attrs...)
	return o
}

// Matches reports whether the record passes q's filters (its paging aside).
func (r *Record) Matches(q Query) bool {
	return (q.PlanID == "" || q.PlanID == r.f.PlanID) &&
		(q.Tenant == "" || q.Tenant == r.f.Tenant) &&
		(q.Actor == "" || q.Actor == r.f.Origin.Actor) &&
		(q.Action == "" || q.Action == r.f.Action)
}

// bounded cuts attrs to MaxAttrs and each text to MaxText.
func bounded(attrs []Attr) []Attr {
	if len(attrs) > MaxAttrs {
		attrs = attrs[:MaxAttrs]
	}
	out := make([]Attr, len(attrs))
	for i, a := range attrs {
		out[i] = Attr{Key: cut(a.Key), Value: cut(a.Value)}
	}
	return out
}

// cut shortens s to MaxText bytes at a rune boundary, marking the cut.
func cut(s string) string {
	if len(s) <= MaxText {
		return s
	}
	end := MaxText - len("…")
	for end > 0 && (s[end]&0xC0) == 0x80 {
		end--
	}
	return s[:end] + "…"
}
