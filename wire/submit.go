package wire

import "time"

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
	// OnFailure is what a task that fails sets off: none (default), rollback (it undoes its
	// completed stages) or pause (the plan pauses).
	OnFailure string `json:"onFailure,omitempty"`
	// Approvers is who may decide on the plan's rings, and at its gates that have no rule of
	// their own.
	Approvers *Approvers `json:"approvers,omitempty"`
	// Notify is where the plan's notifications go (at most 8 destinations).
	Notify []NotifyRequest `json:"notify,omitempty"`
}

// WaveRequest is one ring of a progressive rollout. Size is a count (a number), a percentage
// of the plan's tenants ("10%") or "rest" (the last wave only); FailureBudget a count or a
// percentage of the ring's tenants; Bake a Go duration; Then "auto" (default) or "approve";
// Health an http check made once after the bake (kind defaults to http); Analysis the ring's
// analyses, measured throughout its bake: each an object of a prometheus stage's params (no
// count) with an optional name (default analysis-1, analysis-2, ...) and kind (prometheus).
type WaveRequest struct {
	Name           string           `json:"name,omitempty"`
	Size           any              `json:"size"`
	MaxConcurrency int              `json:"maxConcurrency,omitempty"`
	Bake           string           `json:"bake,omitempty"`
	Then           string           `json:"then,omitempty"`
	FailureBudget  any              `json:"failureBudget,omitempty"`
	Health         *StageRequest    `json:"health,omitempty"`
	Analysis       []map[string]any `json:"analysis,omitempty"`
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
	// Undo is the stage's compensation, run by a rollback once the stage completed (newest
	// first); its name defaults to the stage's. A wave's health check has none.
	Undo *StageRequest `json:"undo,omitempty"`
	// Approvers is a gate's rule (the approval kind only): who may decide, how many approve.
	Approvers *Approvers `json:"approvers,omitempty"`
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
