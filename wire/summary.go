package wire

import "time"

// PlanSummary is GET /v1/plans/{planId}/summary: a plan's tasks counted without listing them.
type PlanSummary struct {
	PlanID string `json:"planId"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Total counts the plan's tasks; Missing those the store no longer holds (not counted
	// anywhere else).
	Total   int `json:"total"`
	Missing int `json:"missing,omitempty"`
	// Statuses counts the tasks by status (every status, 0 included).
	Statuses map[string]int `json:"statuses"`
	// Stages counts the tasks by current stage and status: one entry per stage of the plan,
	// in order, then one whose index is the number of stages (every stage done), each with the
	// statuses that have tasks there.
	Stages []StageCounts `json:"stages"`
	// FailureClasses counts the tasks whose last error has a class, most first, each with a
	// sample tenant and its message.
	FailureClasses []ClassCount `json:"failureClasses"`
	// Gates lists the stages with WAITING tasks (at their approval gate), in stage order.
	Gates []GateCount `json:"gates"`
	// Slowest are the RUNNING tasks longest at their current stage, longest first.
	Slowest []SlowTask `json:"slowest"`
}

// StageCounts counts the tasks at one stage by status.
type StageCounts struct {
	Index  int            `json:"index"`
	Name   string         `json:"name,omitempty"` // absent past the last stage
	Counts map[string]int `json:"counts"`
}

// ClassCount counts the tasks of one failure class, with a sample.
type ClassCount struct {
	Class          string `json:"class"`
	Count          int    `json:"count"`
	SampleTenantID string `json:"sampleTenantId"`
	SampleMessage  string `json:"sampleMessage"`
}

// GateCount counts the tasks WAITING at one stage's gate.
type GateCount struct {
	StageIndex int    `json:"stageIndex"`
	Stage      string `json:"stage"`
	Waiting    int    `json:"waiting"`
}

// SlowTask is a RUNNING task and how long it has been at its stage.
type SlowTask struct {
	TaskID     string    `json:"taskId"`
	TenantID   string    `json:"tenantId"`
	StageIndex int       `json:"stageIndex"`
	Stage      string    `json:"stage"`
	Since      time.Time `json:"since"`
	RunningMs  int64     `json:"runningMs"`
}
