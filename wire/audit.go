package wire

import "time"

// AuditRecord is one operator action, as GET /v1/audit lists it: who asked for what, through
// which executor, and what came of it.
type AuditRecord struct {
	ID        string    `json:"id"`
	At        time.Time `json:"at"`
	Actor     string    `json:"actor"`
	Role      string    `json:"role,omitempty"`
	RequestID string    `json:"requestId,omitempty"`
	Executor  string    `json:"executor,omitempty"`
	// Action is submit, pause, resume, cancel, retry, rollback, approve, reject, unlock, or
	// bulk-<action> (approve, reject, retry, cancel, rollback) for an action on a filter.
	Action string `json:"action"`
	PlanID string `json:"planId,omitempty"`
	Tenant string `json:"tenant,omitempty"`
	TaskID string `json:"taskId,omitempty"`
	// Request is what was asked beyond the target: a filter, fromCheckpoint, a comment, a
	// submission's name and tenant count.
	Request map[string]string `json:"request,omitempty"`
	// Result is applied, refused, or pending: the executor stopped before it could record
	// the outcome (the plan or the tenant tells whether the action took effect).
	Result string `json:"result"`
	// Code is why a refused action was refused (a problem's code: invalid-transition,
	// forbidden, …).
	Code string `json:"code,omitempty"`
	// Outcome is what an applied action reported: the status after, counts (matched,
	// applied, skipped), an unlock's previous owner and fence epoch.
	Outcome   map[string]string `json:"outcome,omitempty"`
	SettledAt *time.Time        `json:"settledAt,omitempty"`
}

// AuditPage is a page of GET /v1/audit, newest first; NextCursor, when set, is the ?cursor=
// of the next page.
type AuditPage struct {
	Records    []AuditRecord `json:"records"`
	NextCursor string        `json:"nextCursor,omitempty"`
}
