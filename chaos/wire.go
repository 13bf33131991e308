//go:build chaos

package chaos

// The executor's HTTP bodies as the suite reads them (docs/api.md): only the fields it needs,
// declared here so that the suite depends on the wire format, not on the api package's Go
// types.

type planRequest struct {
	Name           string          `json:"name"`
	MaxConcurrency int             `json:"maxConcurrency,omitempty"`
	Stages         []stageRequest  `json:"stages"`
	Tenants        []tenantRequest `json:"tenants"`
}

type stageRequest struct {
	Name    string         `json:"name"`
	Kind    string         `json:"kind"`
	Params  map[string]any `json:"params,omitempty"`
	Timeout string         `json:"timeout,omitempty"`
	Retry   *retryPolicy   `json:"retry,omitempty"`
}

type retryPolicy struct {
	MaxAttempts    int    `json:"maxAttempts,omitempty"`
	InitialBackoff string `json:"initialBackoff,omitempty"`
	MaxBackoff     string `json:"maxBackoff,omitempty"`
}

type tenantRequest struct {
	ID string `json:"id"`
}

type wirePlan struct {
	PlanID   string         `json:"planId"`
	Name     string         `json:"name"`
	Status   string         `json:"status"`
	Reason   string         `json:"reason,omitempty"`
	TaskIDs  []string       `json:"taskIds"`
	Progress map[string]int `json:"progress"`
}

type wirePlanList struct {
	Plans      []wirePlan `json:"plans"`
	NextCursor string     `json:"nextCursor,omitempty"`
}

type wireFailure struct {
	Stage   string `json:"stage,omitempty"`
	Class   string `json:"class"`
	Message string `json:"message"`
}

type wireTask struct {
	TaskID       string       `json:"taskId"`
	TenantID     string       `json:"tenantId"`
	PlanID       string       `json:"planId"`
	Status       string       `json:"status"`
	Attempt      int          `json:"attempt"`
	CurrentStage int          `json:"currentStage"`
	Executor     string       `json:"executor,omitempty"`
	LastError    *wireFailure `json:"lastError,omitempty"`
}

type wireTaskList struct {
	Tasks []wireTask `json:"tasks"`
}

type wireTaskRef struct {
	TaskID   string `json:"taskId"`
	TenantID string `json:"tenantId"`
	Reason   string `json:"reason,omitempty"`
}

type wirePlanRetry struct {
	Plan    wirePlan      `json:"plan"`
	Retried []wireTaskRef `json:"retried"`
	Skipped []wireTaskRef `json:"skipped"`
}

type wireRetryBody struct {
	FromCheckpoint *bool `json:"fromCheckpoint,omitempty"`
}

type wirePlanRetryBody struct {
	Status         []string `json:"status,omitempty"`
	FromCheckpoint *bool    `json:"fromCheckpoint,omitempty"`
}

type wireProblem struct {
	Type    string   `json:"type"`
	Detail  string   `json:"detail"`
	Tenants []string `json:"tenants,omitempty"`
}

// Task statuses.
const (
	statusPending     = "PENDING"
	statusRunning     = "RUNNING"
	statusPaused      = "PAUSED"
	statusWaiting     = "WAITING"
	statusInterrupted = "INTERRUPTED"
	statusCompleted   = "COMPLETED"
	statusFailed      = "FAILED"
	statusCancelled   = "CANCELLED"
)

// terminal reports whether a task or plan status is an end: COMPLETED, FAILED, CANCELLED.
func terminal(status string) bool {
	return status == statusCompleted || status == statusFailed || status == statusCancelled
}
