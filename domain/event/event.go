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
	// Undo: a task rolling back undid a stage (its checkpoint moved back); Stage is the
	// stage's index.
	Undo Kind = "undo"
)

// Attempt summarises a task's latest stage attempt.
type Attempt struct {
	StageIndex int
	Stage      string
	Attempt    int
	Outcome    string
	Class      string
}

// Event is one transition. It is the domain value, without a JSON form of its own: GET
// /v1/events sends it, and the Redis event stream stores it, as a wire.Event (package events
// maps one to the other).
type Event struct {
	ID       uint64 // numbered by the hub that publishes it
	Kind     Kind
	At       time.Time
	PlanID   string
	TaskID   string
	TenantID string
	// Status is the plan's or the task's status after the transition.
	Status string
	// Stage is, for a task, the index of its next stage; for a stage event, the index of the
	// stage completed.
	Stage     int
	StageName string
	// Run is the task's attempt number (1 on its first run, +1 per retry).
	Run  int
	Last *Attempt
	// Ring is, for a plan rolled out in rings, where it stands after the transition.
	Ring *Ring
}

// Ring is where a rolling plan stands: its current ring, that ring's wave and state
// (running, baking, checking, awaiting_approval, halted, rejected, passed), when a bake ends,
// and why it halted.
type Ring struct {
	Index      int
	Wave       string
	State      string
	BakeEndsAt *time.Time
	Halt       string
}

// Publisher takes events. Publish must not block: it runs on the path of every transition.
type Publisher interface {
	Publish(e Event)
}
