package wire

import (
	"encoding/json"
	"time"
)

// Task is a task as returned.
type Task struct {
	TaskID           string     `json:"taskId"`
	TenantID         string     `json:"tenantId"`
	PlanID           string     `json:"planId"`
	Status           string     `json:"status"`
	Attempt          int        `json:"attempt"`
	CurrentStage     int        `json:"currentStage"`               // index of the next stage to run
	CurrentStageName string     `json:"currentStageName,omitempty"` // empty once every stage ran; rolling back: the stage undone next
	Stages           []StageRef `json:"stages"`
	PauseRequested   bool       `json:"pauseRequested"`
	PausedByPlan     bool       `json:"pausedByPlan,omitempty"` // PAUSED (or asked to pause) by its plan's pause: the plan's resume resumes it`
	// RollingBack: the task's runs undo its completed stages (a rollback); CurrentStage then
	// counts the stages still applied.
	RollingBack bool `json:"rollingBack,omitempty"`
	// RollbackRequested: an operator asked the RUNNING task to roll back; its run turns back
	// at its next stage boundary, or as its stage ends.
	RollbackRequested bool               `json:"rollbackRequested,omitempty"`
	Executor          string             `json:"executor,omitempty"` // the executor whose run started it last
	LastError         *Failure           `json:"lastError,omitempty"`
	Attempts          []Attempt          `json:"attempts"`
	CreatedAt         time.Time          `json:"createdAt"`
	StartedAt         *time.Time         `json:"startedAt,omitempty"`
	FinishedAt        *time.Time         `json:"finishedAt,omitempty"`
	UpdatedAt         time.Time          `json:"updatedAt"`
	Lease             *Lease             `json:"lease,omitempty"`
	Checkpoint        *CheckpointSummary `json:"checkpoint,omitempty"`
	Wait              *Wait              `json:"wait,omitempty"`     // set while the task is WAITING
	Decision          *Decision          `json:"decision,omitempty"` // the latest operator decision on a gate
}

// Wait tells why a WAITING task waits: the gate stage it stands at (an approval stage, reason
// "approval") and what the operator is asked.
type Wait struct {
	Stage      string    `json:"stage"`
	StageIndex int       `json:"stageIndex"`
	Reason     string    `json:"reason"`
	Message    string    `json:"message,omitempty"`
	Since      time.Time `json:"since"`
	// Approvals are those given so far at a gate whose rule asks for several.
	Approvals []Approval `json:"approvals,omitempty"`
	// Needed is how many approvals pass the gate (its rule's count; 1 without one).
	Needed int `json:"needed,omitempty"`
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
	By         string    `json:"by,omitempty"` // who decided (the token's holder)
	Role       string    `json:"role,omitempty"`
	// Earlier are the approvals given before this decision at a gate whose rule asked for
	// several.
	Earlier []Approval `json:"earlier,omitempty"`
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
	Outcome    string    `json:"outcome"` // succeeded, failed, interrupted (cut short) or in_doubt (its run was taken over while it may have been inside the call); docs/api.md, the attempt ledger
	Class      string    `json:"class,omitempty"`
	Error      string    `json:"error,omitempty"`
	Code       int       `json:"code,omitempty"`
	BackoffMs  int64     `json:"backoffMs,omitempty"`
	Undo       bool      `json:"undo,omitempty"` // an attempt of the stage's undo (a rollback's)
	// Stdout and Stderr are the ends of what the attempt printed (the exec kind: at most 4 KiB
	// of each, secrets hidden), when the task's store still keeps them (its latest 20
	// attempts); returned with one task (GET /v1/tasks/{taskId}, GET /v1/tenants/{tenantId}/task
	// and the commands answering a task), never in a listing.
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
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
	// Progress is how far the next stage got before it completed (an http stage's first
	// response, saved before it polls): a retry from the checkpoint goes on from it.
	Progress *Progress `json:"progress,omitempty"`
}

// Progress is a stage's saved partial progress.
type Progress struct {
	Stage string          `json:"stage"`
	Data  json.RawMessage `json:"data"`
}

// ResumeBody is the optional body of POST /v1/plans/{planId}/resume. All resumes the tasks
// paused one by one (POST /v1/tenants/{tenantId}/pause) too; without it they stay PAUSED.
type ResumeBody struct {
	All bool `json:"all,omitempty"`
}

// SkipBody is the optional body of POST /v1/tenants/{tenantId}/skip: the operator's comment,
// kept in the audit record.
type SkipBody struct {
	Comment string `json:"comment,omitempty"`
}

// RetryBody is the body of POST /v1/tenants/{tenantId}/retry. FromCheckpoint defaults to true
// when omitted (resume after the last completed stage); false restarts at stage 0.
type RetryBody struct {
	FromCheckpoint *bool `json:"fromCheckpoint,omitempty"`
}
