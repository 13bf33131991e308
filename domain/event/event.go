// Package event is what the executor tells watchers: one Event per plan, task or stage
// transition. Invariants: an Event names its plan; task and stage events name their task and
// tenant; ID is 0 until a hub numbers it, and a hub's IDs only grow.
package event

import "time"

// Kind is what changed.
type Kind string

// Kinds of events.
const (
	// Plan: a plan's status changed (created, started, paused, resumed, settled, cancelled).
	Plan Kind = "plan"
	// Task: a task's status changed, or a failed attempt of its current stage was recorded
	// (it will be retried).
	Task Kind = "task"
	// Stage: a task completed a stage (its checkpoint moved on).
	Stage Kind = "stage"
)

// Attempt summarises a task's latest stage attempt.
type Attempt struct {
	StageIndex int    `json:"stageIndex"`
	Stage      string `json:"stage"`
	Attempt    int    `json:"attempt"`
	Outcome    string `json:"outcome"`
	Class      string `json:"class,omitempty"`
}

// Event is one transition.
type Event struct {
	ID       uint64    `json:"id"` // numbered by the hub that publishes it
	Kind     Kind      `json:"kind"`
	At       time.Time `json:"at"`
	PlanID   string    `json:"planId"`
	TaskID   string    `json:"taskId,omitempty"`
	TenantID string    `json:"tenantId,omitempty"`
	// Status is the plan's or the task's status after the transition.
	Status string `json:"status"`
	// Stage is, for a task, the index of its next stage; for a stage event, the index of the
	// stage completed.
	Stage     int    `json:"stage"`
	StageName string `json:"stageName,omitempty"`
	// Run is the task's attempt number (1 on its first run, +1 per retry).
	Run  int      `json:"run,omitempty"`
	Last *Attempt `json:"lastAttempt,omitempty"`
	// Ring is, for a plan rolled out in rings, where it stands after the transition.
	Ring *Ring `json:"ring,omitempty"`
}

// Ring is where a rolling plan stands: its current ring, that ring's wave and state
// (running, baking, checking, awaiting_approval, halted, rejected, passed), when a bake ends,
// and why it halted.
type Ring struct {
	Index      int        `json:"index"`
	Wave       string     `json:"wave"`
	State      string     `json:"state"`
	BakeEndsAt *time.Time `json:"bakeEndsAt,omitempty"`
	Halt       string     `json:"halt,omitempty"`
}

// Publisher takes events. Publish must not block: it runs on the path of every transition.
type Publisher interface {
	Publish(e Event)
}
