package wire

import "time"

// Event is one transition as GET /v1/events sends it (the data of a server-sent event whose
// id is ID and whose name is Kind). The Redis event stream holds events in this form too, but
// for their id: there it is the publishing executor's own event number, a JSON number
// (docs/redis.md, The event stream; infra/eventstream).
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
