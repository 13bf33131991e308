package wire

import "time"

// The kinds of answer of POST /v1/plans (Plan.Kind, DryRun.Kind): the discriminator that
// tells a plan from a dry run.
const (
	KindPlan   = "plan"
	KindDryRun = "dryRun"
)

// Plan is a plan as returned.
type Plan struct {
	Kind   string            `json:"kind"` // always KindPlan
	PlanID string            `json:"planId"`
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	Status string            `json:"status"`
	// Outcome is how the plan ended (absent while it has not): done (every tenant completed),
	// done_with_exceptions (COMPLETED, with tenants cancelled or skipped one by one: progress
	// counts them), failed or cancelled.
	Outcome        string         `json:"outcome,omitempty"`
	Reason         string         `json:"reason,omitempty"` // why the executor PAUSED the plan itself (an executor was lost)
	MaxConcurrency int            `json:"maxConcurrency"`
	FailureBudget  int            `json:"failureBudget"`
	Stages         []StageRef     `json:"stages"`
	TaskIDs        []string       `json:"taskIds,omitempty"`      // GET answers: only with ?include=taskIds; the submission's and a retry's answers: always
	Progress       map[string]int `json:"progress"`               // "total", one count per task status, and "MISSING" when tasks are missing
	MissingTasks   []MissingTask  `json:"missingTasks,omitempty"` // tasks the store no longer holds; absent when none
	StartAt        *time.Time     `json:"startAt,omitempty"`
	StartRate      int            `json:"startRate,omitempty"` // task starts per minute; absent: no pacing
	OnFailure      string         `json:"onFailure"`           // none, rollback or pause
	Canary         *Canary        `json:"canary,omitempty"`    // absent: no canary wave
	Rings          *Rings         `json:"rings,omitempty"`     // absent: no rollout in rings (a canary plan's two rings are here too)
	CreatedAt      time.Time      `json:"createdAt"`
	StartedAt      *time.Time     `json:"startedAt,omitempty"`
	FinishedAt     *time.Time     `json:"finishedAt,omitempty"`
	SubmittedBy    string         `json:"submittedBy,omitempty"` // the token's holder who submitted it
	Approvers      *Approvers     `json:"approvers,omitempty"`   // the plan's rule; absent: any operator, one approval
	Decisions      []RingDecision `json:"decisions,omitempty"`   // the decisions on its rings, oldest first
	Notify         []Destination  `json:"notify,omitempty"`      // where its notifications go
	// Warnings, on the submission's answer only (not on a replay), say how the plan will run
	// that its request does not: a maxConcurrency above the accepting executor's workers.
	Warnings []string `json:"warnings,omitempty"`
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
	// Undo is the kind of the stage's undo, absent when it has none.
	Undo string `json:"undo,omitempty"`
	// Approvers is a gate's rule (its own, or the plan's), absent when it has none.
	Approvers *Approvers `json:"approvers,omitempty"`
}

// PlanList is a page of plans, newest first. NextCursor, when set, is the ?cursor= of the
// next page.
type PlanList struct {
	Plans      []Plan `json:"plans"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// ProgressMissing is the key of a plan's progress counting the tasks the store no longer
// holds; present only when there are some.
const ProgressMissing = "MISSING"

// DryRun is the answer to POST /v1/plans?dryRun=true: a summary of the plan, what a page of
// its tenants would run (every tenant is rendered and checked), and which tenants would
// conflict. Nothing is created.
type DryRun struct {
	Kind      string          `json:"kind"` // always KindDryRun
	DryRun    bool            `json:"dryRun"`
	Summary   DryRunSummary   `json:"summary"`
	Tenants   []TenantPreview `json:"tenants"` // the page's tenants, in submission order
	Page      PreviewPage     `json:"page"`
	Conflicts []string        `json:"conflicts"`
	Warnings  []string        `json:"warnings,omitempty"` // as the submission's answer would carry them
	// ConflictTasks are the tasks holding the first conflicting tenants (at most 5): their
	// plans and statuses; absent when none conflicts.
	ConflictTasks []ConflictTask `json:"conflictTasks,omitempty"`
	Rings         []RingPreview  `json:"rings,omitempty"` // which tenants fall in which ring; absent without waves
}

// ConflictTask is the latest task of a tenant that conflicts: it has not ended.
type ConflictTask struct {
	TenantID string `json:"tenantId"`
	PlanID   string `json:"planId"`
	TaskID   string `json:"taskId"`
	Status   string `json:"status"`
}

// DryRunSummary counts what a dry run checked.
type DryRunSummary struct {
	Tenants   int `json:"tenants"`   // the plan's tenants, all rendered and checked
	Conflicts int `json:"conflicts"` // tenants whose latest task has not ended
	Rings     int `json:"rings"`     // 0 without waves
}

// PreviewPage is which tenants a dry run answers: Limit from the Offset-th, in submission
// order; NextOffset, when set, is the ?previewOffset= of the next page.
type PreviewPage struct {
	Offset     int `json:"offset"`
	Limit      int `json:"limit"`
	NextOffset int `json:"nextOffset,omitempty"`
}

// RingPreview is one ring of a dry run: its wave and its tenants, in the order they start.
type RingPreview struct {
	Wave    string   `json:"wave"`
	Tenants []string `json:"tenants"`
	// Analysis are the ring's analyses, each measured once by the dry run.
	Analysis []AnalysisPreview `json:"analysis,omitempty"`
}

// AnalysisPreview is a dry run's one measurement of a ring's analysis.
type AnalysisPreview struct {
	Name        string      `json:"name"`
	Measurement Measurement `json:"measurement"`
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
	// Measurement is the dry run's one measurement of an analysis stage (prometheus), so
	// that a typo in a query shows before the rollout; absent for other kinds.
	Measurement *Measurement `json:"measurement,omitempty"`
}
