package wire

// The bodies of the rollout-control routes (docs/api.md, Rollout control): bulk retry, gate
// decisions and the tenant lock tools.

// PlanRetryBody is the optional body of POST /v1/plans/{planId}/retry. Status selects the
// tasks to retry by status (FAILED, INTERRUPTED, CANCELLED or PAUSED, any case; empty:
// FAILED and INTERRUPTED). FromCheckpoint defaults to true when omitted, as for a tenant's
// retry; false restarts every selected task at stage 0.
type PlanRetryBody struct {
	Status         []string `json:"status,omitempty"`
	FromCheckpoint *bool    `json:"fromCheckpoint,omitempty"`
}

// PlanRetry is the answer to POST /v1/plans/{planId}/retry: the plan afterwards, the tasks
// retried and the tasks selected but skipped, each with the reason. Both lists are always
// present ([] when empty).
type PlanRetry struct {
	Plan    Plan      `json:"plan"`
	Retried []TaskRef `json:"retried"`
	Skipped []TaskRef `json:"skipped"`
}

// TaskRef names one task of a bulk operation; Reason says why it was skipped.
type TaskRef struct {
	TaskID   string `json:"taskId"`
	TenantID string `json:"tenantId"`
	Reason   string `json:"reason,omitempty"`
}

// DecisionBody is the optional body of POST /v1/tenants/{tenantId}/approve and /reject: the
// operator's comment (at most app.MaxCommentLength bytes), kept with the task's decision.
type DecisionBody struct {
	Comment string `json:"comment,omitempty"`
}

// TenantLock is the answer to GET /v1/tenants/{tenantId}/lock: who holds the tenant's lease
// (Owner "<planId>:<taskId>", TTLMs the time left, 0 or absent when it never expires), the
// tenant's latest task and that task's fence epoch.
type TenantLock struct {
	TenantID string `json:"tenantId"`
	Held     bool   `json:"held"`
	Owner    string `json:"owner,omitempty"`
	TTLMs    int64  `json:"ttlMs,omitempty"`
	TaskID   string `json:"taskId"`
	PlanID   string `json:"planId"`
	Epoch    uint64 `json:"epoch"`
}

// TenantUnlock is the answer to POST /v1/tenants/{tenantId}/unlock: whether a lease was
// removed and whose it was, the tenant's latest task, its fence epoch after the unlock (writes
// of the old holder carry an older one and are refused), and whether its RUNNING run was
// interrupted by it (retry the tenant to go on).
type TenantUnlock struct {
	TenantID      string `json:"tenantId"`
	Released      bool   `json:"released"`
	PreviousOwner string `json:"previousOwner,omitempty"`
	TaskID        string `json:"taskId,omitempty"`
	Epoch         uint64 `json:"epoch"`
	Interrupted   bool   `json:"interrupted"`
}
