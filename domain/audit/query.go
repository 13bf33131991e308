package audit

import "context"

// DefaultLimit and MaxLimit bound a page of records.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// MaxPerPlan bounds the records kept of one plan: beyond, the oldest go first. A bulk action
// is one record whatever the tenants it touched, so only an operator sending as many actions
// one tenant at a time reaches it.
const MaxPerPlan = 10000

// Query selects records: every filter set must match. Without PlanID, the records of every
// plan are read, newest plans first.
type Query struct {
	PlanID, Tenant, Actor, Action string
	// Cursor is a previous Page's Next: the page goes on after its last record.
	Cursor string
	Limit  int // default DefaultLimit, at most MaxLimit
}

// Page is one page of records, newest first.
type Page struct {
	Records []*Record
	// Next is the cursor of the following page, "" on the last one.
	Next string
}

// Log stores the records. Implementations: infra/memrepo, infra/redisrepo.
type Log interface {
	// Append stores a new record before its action takes effect; an error means it was not
	// stored, and the action must not be taken.
	Append(ctx context.Context, r *Record) error
	// Settle stores the outcome r was given (Record.Settle) with it.
	Settle(ctx context.Context, r *Record) error
	// List returns a page of the records q selects, newest first.
	List(ctx context.Context, q Query) (Page, error)
	// Forget drops every record of plan planID, a plan that was never created (its
	// submission was refused): a request that named no existing plan leaves no record.
	Forget(ctx context.Context, planID string) error
}
