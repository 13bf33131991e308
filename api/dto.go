package api

import (
	"encoding/json"
	"time"
)

// PlanRequest is a plan submission (POST /v1/plans), in JSON or YAML. Durations are Go
// duration strings ("10s", "200ms").
type PlanRequest struct {
	Name           string            `json:"name"`
	Labels         map[string]string `json:"labels,omitempty"`
	MaxConcurrency int               `json:"maxConcurrency,omitempty"`
	// FailureBudget is a count of failed tasks plan-wide after which nothing new starts (a
	// number), or, with waves, a percentage of each ring's tenants ("5%") whose crossing
	// halts the plan.
	FailureBudget any             `json:"failureBudget,omitempty"`
	StartAt       *time.Time      `json:"startAt,omitempty"`
	StartRate     int             `json:"startRate,omitempty"` // task starts per minute; 0: no pacing
	Canary        *CanaryRequest  `json:"canary,omitempty"`
	Waves         []WaveRequest   `json:"waves,omitempty"`
	Order         string          `json:"order,omitempty"` // how unpinned tenants are dealt into the waves: submission (default) or shuffle
	Seed          uint64          `json:"seed,omitempty"`  // shuffle's seed; 0: one derived from the tenant ids
	Stages        []StageRequest  `json:"stages"`
	Tenants       []TenantRequest `json:"tenants"`
}

// WaveRequest is one ring of a progressive rollout. Size is a count (a number), a percentage
// of the plan's tenants ("10%") or "rest" (the last wave only); FailureBudget a count or a
// percentage of the ring's tenants; Bake a Go duration; Then "auto" (default) or "approve";
// Health an http check made once after the bake (kind defaults to http).
type WaveRequest struct {
	Name           string        `json:"name,omitempty"`
	Size           any           `json:"size"`
	MaxConcurrency int           `json:"maxConcurrency,omitempty"`
	Bake           string        `json:"bake,omitempty"`
	Then           string        `json:"then,omitempty"`
	FailureBudget  any           `json:"failureBudget,omitempty"`
	Health         *StageRequest `json:"health,omitempty"`
}

// CanaryRequest is a submission's canary wave: its first Tenants tenants (in submission
// order) run first; Then ("auto" or "approve") says how the rest start once they completed.
type CanaryRequest struct {
	Tenants int    `json:"tenants"`
	Then    string `json:"then"`
}

// StageRequest is one stage of a submission.
type StageRequest struct {
	Name    string         `json:"name"`
	Kind    string         `json:"kind"`
	Params  map[string]any `json:"params,omitempty"`
	Timeout string         `json:"timeout,omitempty"`
	Retry   *RetryRequest  `json:"retry,omitempty"`
}

// RetryRequest is a stage's retry policy; omitted fields take the defaults.
type RetryRequest struct {
	MaxAttempts    int     `json:"maxAttempts,omitempty"`
	InitialBackoff string  `json:"initialBackoff,omitempty"`
	MaxBackoff     string  `json:"maxBackoff,omitempty"`
	Multiplier     float64 `json:"multiplier,omitempty"`
	Jitter         string  `json:"jitter,omitempty"`
}

// TenantRequest is one tenant of a submission.
type TenantRequest struct {
	ID     string         `json:"id"`
	Params map[string]any `json:"params,omitempty"`
	Wave   string         `json:"wave,omitempty"` // pins the tenant to the wave of that name
}

// Plan is a plan as returned.
type Plan struct {
	PlanID         string            `json:"planId"`
	Name           string            `json:"name"`
	Labels         map[string]string `json:"labels,omitempty"`
	Status         string            `json:"status"`
	Reason         string            `json:"reason,omitempty"` // why the executor PAUSED the plan itself (an executor was lost)
	MaxConcurrency int               `json:"maxConcurrency"`
	FailureBudget  int               `json:"failureBudget"`
	Stages         []StageRef        `json:"stages"`
	TaskIDs        []string          `json:"taskIds,omitempty"`      // GET answers: only with ?include=taskIds; the submission's and a retry's answers: always
	Progress       map[string]int    `json:"progress"`               // "total", one count per task status, and "MISSING" when tasks are missing
	MissingTasks   []MissingTask     `json:"missingTasks,omitempty"` // tasks the store no longer holds; absent when none
	StartAt        *time.Time        `json:"startAt,omitempty"`
	StartRate      int               `json:"startRate,omitempty"` // task starts per minute; absent: no pacing
	Canary         *Canary           `json:"canary,omitempty"`    // absent: no canary wave
	Rings          *Rings            `json:"rings,omitempty"`     // absent: no rollout in rings (a canary plan's two rings are here too)
	CreatedAt      time.Time         `json:"createdAt"`
	StartedAt      *time.Time        `json:"startedAt,omitempty"`
	FinishedAt     *time.Time        `json:"finishedAt,omitempty"`
}

// MissingTask is a task of a plan that the store no longer holds (Redis lost it while the
// plan survived): its id, and its index in the plan's taskIds, which is also its tenant's
// index in the submission's tenants (the task's tenant was lost with it).
type MissingTask struct {
	TaskID string `json:"taskId"`
	Index  int    `json:"index"`
}

// Canary is a plan's canary wave as returned, with the phase the plan stands in:
// CANARY, AWAITING_APPROVAL, PROMOTED or HALTED.
type Canary struct {
	Tenants int    `json:"tenants"`
	Then    string `json:"then"`
	Phase   string `json:"phase"`
}

// StageRef names a stage of a plan or task.
type StageRef struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

// PlanList is a page of plans, newest first. NextCursor, when set, is the ?cursor= of the
// next page.
type PlanList struct {
	Plans      []Plan `json:"plans"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// Task is a task as returned.
type Task struct {
	TaskID           string             `json:"taskId"`
	TenantID         string             `json:"tenantId"`
	PlanID           string             `json:"planId"`
	Status           string             `json:"status"`
	Attempt          int                `json:"attempt"`
	CurrentStage     int                `json:"currentStage"`               // index of the next stage to run
	CurrentStageName string             `json:"currentStageName,omitempty"` // empty once every stage ran
	Stages           []StageRef         `json:"stages"`
	PauseRequested   bool               `json:"pauseRequested"`
	Executor         string             `json:"executor,omitempty"` // the executor whose run started it last
	LastError        *Failure           `json:"lastError,omitempty"`
	Attempts         []Attempt          `json:"attempts"`
	CreatedAt        time.Time          `json:"createdAt"`
	StartedAt        *time.Time         `json:"startedAt,omitempty"`
	FinishedAt       *time.Time         `json:"finishedAt,omitempty"`
	UpdatedAt        time.Time          `json:"updatedAt"`
	Lease            *Lease             `json:"lease,omitempty"`
	Checkpoint       *CheckpointSummary `json:"checkpoint,omitempty"`
	Wait             *Wait              `json:"wait,omitempty"`     // set while the task is WAITING
	Decision         *Decision          `json:"decision,omitempty"` // the latest operator decision on a gate
}

// Wait tells why a WAITING task waits: the gate stage it stands at (an approval stage, reason
// "approval") and what the operator is asked.
type Wait struct {
	Stage      string    `json:"stage"`
	StageIndex int       `json:"stageIndex"`
	Reason     string    `json:"reason"`
	Message    string    `json:"message,omitempty"`
	Since      time.Time `json:"since"`
}

// Decision is an operator's latest approval or rejection of a task's gate stage, in run Run
// (the task's attempt).
type Decision struct {
	Stage      string    `json:"stage"`
	StageIndex int       `json:"stageIndex"`
	Run        int       `json:"run"`
	Approved   bool      `json:"approved"`
	Comment    string    `json:"comment,omitempty"`
	DecidedAt  time.Time `json:"decidedAt"`
}

// TaskList is a page of a plan's tasks in the plan's task order. Total counts the plan's
// tasks matching the filter over every page; NextCursor, when set, is the ?cursor= of the
// next page (absent on the last). MissingTasks lists every task of the plan the store no
// longer holds (whatever the page and the status asked for); absent when none.
type TaskList struct {
	Tasks        []Task        `json:"tasks"`
	Total        int           `json:"total"`
	NextCursor   string        `json:"nextCursor,omitempty"`
	MissingTasks []MissingTask `json:"missingTasks,omitempty"`
}

// Failure is a structured error record.
type Failure struct {
	Stage   string `json:"stage,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
	Class   string `json:"class"`
	Message string `json:"message"`
	Code    int    `json:"code,omitempty"`
}

// Attempt is one entry of a task's attempt ledger.
type Attempt struct {
	StageIndex int       `json:"stageIndex"`
	Stage      string    `json:"stage"`
	Run        int       `json:"run"`
	Attempt    int       `json:"attempt"`
	StartedAt  time.Time `json:"startedAt"`
	EndedAt    time.Time `json:"endedAt"`
	Outcome    string    `json:"outcome"` // succeeded, failed or interrupted (cut short; docs/api.md, the attempt ledger)
	Class      string    `json:"class,omitempty"`
	Error      string    `json:"error,omitempty"`
	Code       int       `json:"code,omitempty"`
	BackoffMs  int64     `json:"backoffMs,omitempty"`
}

// Lease tells who holds the task's tenant.
type Lease struct {
	Held  bool   `json:"held"`
	Owner string `json:"owner,omitempty"`
	TTLMs int64  `json:"ttlMs"` // 0 when held without expiry (in-process leases) or not held
}

// CheckpointSummary is the part of a checkpoint shown with a task.
type CheckpointSummary struct {
	LastCompletedStageIndex int       `json:"lastCompletedStageIndex"`
	CompletedStages         []string  `json:"completedStages"`
	SavedAt                 time.Time `json:"savedAt"`
}

// Checkpoint is a checkpoint as returned by GET /v1/tenants/{tenantId}/checkpoint.
type Checkpoint struct {
	TaskID                  string                     `json:"taskId"`
	TenantID                string                     `json:"tenantId"`
	LastCompletedStageIndex int                        `json:"lastCompletedStageIndex"`
	CompletedStages         []string                   `json:"completedStages"`
	ContextData             map[string]json.RawMessage `json:"contextData"`
	SavedAt                 time.Time                  `json:"savedAt"`
	Fence                   uint64                     `json:"fence"`
}

// RetryBody is the body of POST /v1/tenants/{tenantId}/retry. FromCheckpoint defaults to true
// when omitted (resume after the last completed stage); false restarts at stage 0.
type RetryBody struct {
	FromCheckpoint *bool `json:"fromCheckpoint,omitempty"`
}

// DryRun is the answer to POST /v1/plans?dryRun=true: what would run, and which tenants
// would conflict. Nothing is created.
type DryRun struct {
	DryRun    bool            `json:"dryRun"`
	Tenants   []TenantPreview `json:"tenants"` // in ring order for a plan with waves
	Conflicts []string        `json:"conflicts"`
	Rings     []RingPreview   `json:"rings,omitempty"` // which tenants fall in which ring; absent without waves
}

// RingPreview is one ring of a dry run: its wave and its tenants, in the order they start.
type RingPreview struct {
	Wave    string   `json:"wave"`
	Tenants []string `json:"tenants"`
}

// TenantPreview is one tenant's rendered stages in a dry run.
type TenantPreview struct {
	TenantID string          `json:"tenantId"`
	Stages   []RenderedStage `json:"stages"`
}

// RenderedStage is a stage with its params rendered for one tenant. Outputs of earlier
// stages are not known before they run: what index reads from them renders as a placeholder,
// "<output STAGE.KEY>".
type RenderedStage struct {
	Name   string         `json:"name"`
	Kind   string         `json:"kind"`
	Params map[string]any `json:"params,omitempty"`
}

// Problem is an RFC 9457 problem+json error body.
type Problem struct {
	Type    string         `json:"type"`
	Title   string         `json:"title"`
	Status  int            `json:"status"`
	Detail  string         `json:"detail,omitempty"`
	Field   string         `json:"field,omitempty"` // the first invalid field
	Errors  []FieldProblem `json:"errors,omitempty"`
	Tenants []string       `json:"tenants,omitempty"` // conflicting tenants (409 on submit)

	// ErrorsOmitted counts the invalid fields found beyond the first app.MaxViolations, which
	// errors does not list.
	ErrorsOmitted int `json:"errorsOmitted,omitempty"`
}

// FieldProblem names one invalid field.
type FieldProblem struct {
	Field  string `json:"field"`
	Detail string `json:"detail"`
}

// Health is the body of /healthz and /readyz.
type Health struct {
	Status   string     `json:"status"`             // "ok"; "degraded" (readyz, a 503) while Redis is away; "unavailable" (a 503) when the probe's write or read failed, or Redis was not reached since the start
	Executor string     `json:"executor,omitempty"` // the serving executor's name (Options.Name)
	Redis    string     `json:"redis,omitempty"`    // "ok" | "degraded" | "unavailable" | "disabled" (readyz)
	Since    *time.Time `json:"since,omitempty"`    // degraded: since when
	Journal  *int       `json:"journal,omitempty"`  // degraded: aggregates waiting to be written back
	Reason   string     `json:"reason,omitempty"`   // degraded: the Redis error that began the outage; unavailable: the probe's error
}

// Event is one transition as GET /v1/events sends it (the data of a server-sent event whose
// id is ID and whose name is Kind).
type Event struct {
	ID       string    `json:"id"`   // the entry ID: "42" on memory, "1732390000123-0" on Redis
	Kind     string    `json:"kind"` // plan, task or stage
	At       time.Time `json:"at"`
	PlanID   string    `json:"planId"`
	TaskID   string    `json:"taskId,omitempty"`
	TenantID string    `json:"tenantId,omitempty"`
	// Status is the plan's or task's status after the transition.
	Status string `json:"status"`
	// Stage is a task's next stage, or for a stage event the stage completed (0-based).
	Stage       int           `json:"stage"`
	StageName   string        `json:"stageName,omitempty"`
	Run         int           `json:"run,omitempty"`
	LastAttempt *EventAttempt `json:"lastAttempt,omitempty"`
	Ring        *EventRing    `json:"ring,omitempty"` // a plan event of a plan rolled out in rings: where it stands
}

// EventRing is a rolling plan's current ring in an Event: its index, wave, state, when its
// bake ends and why it halted.
type EventRing struct {
	Index      int        `json:"index"`
	Wave       string     `json:"wave"`
	State      string     `json:"state"`
	BakeEndsAt *time.Time `json:"bakeEndsAt,omitempty"`
	Halt       string     `json:"halt,omitempty"`
}

// EventAttempt is a task's latest stage attempt in an Event.
type EventAttempt struct {
	StageIndex int    `json:"stageIndex"`
	Stage      string `json:"stage"`
	Attempt    int    `json:"attempt"`
	Outcome    string `json:"outcome"`
	Class      string `json:"class,omitempty"`
}
