package wire

// BulkTasksBody is the body of POST /v1/plans/{planId}/tasks/{action} (approve, reject,
// retry, cancel): which of the plan's tasks to act on, with the filters of the task listing,
// and the action's options. Every field is optional.
type BulkTasksBody struct {
	// Status lists the statuses to act on (any case); empty: every status the action can
	// change (retry: FAILED and INTERRUPTED).
	Status []string `json:"status,omitempty"`
	// Stage is the current stage: its name or its index ("0".."len(stages)").
	Stage string `json:"stage,omitempty"`
	// Class is the failure class of the task's last error.
	Class string `json:"class,omitempty"`
	// Tenant is a tenant id prefix.
	Tenant string `json:"tenant,omitempty"`
	// Ring is a rolling plan's ring: its wave's name or its index.
	Ring string `json:"ring,omitempty"`
	// Comment is recorded with each decision (approve, reject).
	Comment string `json:"comment,omitempty"`
	// FromCheckpoint (retry) resumes after the last completed stage; absent: true.
	FromCheckpoint *bool `json:"fromCheckpoint,omitempty"`
}

// BulkResult is what an action on a filter did: how many tasks matched, how many took the
// action, and the skipped ones with the reason (the first app.MaxBulkSkippedListed of them;
// SkippedCount counts them all).
type BulkResult struct {
	PlanID       string    `json:"planId"`
	Action       string    `json:"action"`
	Matched      int       `json:"matched"`
	Applied      int       `json:"applied"`
	SkippedCount int       `json:"skippedCount"`
	Skipped      []TaskRef `json:"skipped"`
}
