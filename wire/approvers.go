package wire

import "time"

// Approvers is an approvers rule, on a plan (its rings, and its gates without their own) or
// on a gate (an approval stage): who may decide and how many approvals pass. Every field is
// optional.
type Approvers struct {
	// Roles: only tokens of these roles decide (read, operate).
	Roles []string `json:"roles,omitempty"`
	// Names: only these token holders decide.
	Names []string `json:"names,omitempty"`
	// Count: distinct approvals needed (default 1); one rejection rejects.
	Count int `json:"count,omitempty"`
	// NotSubmitter: the plan's submitter may not decide.
	NotSubmitter bool `json:"notSubmitter,omitempty"`
}

// Approval is one operator's decision as a plan or a task shows it.
type Approval struct {
	Approved  bool      `json:"approved"`
	By        string    `json:"by,omitempty"` // the token's holder; absent for decisions recorded before actors
	Role      string    `json:"role,omitempty"`
	Comment   string    `json:"comment,omitempty"`
	DecidedAt time.Time `json:"decidedAt"`
}

// RingDecision is a decision on a plan's ring: Partial for an approval that counted toward
// a rule asking for several, without moving the ring.
type RingDecision struct {
	Ring     int    `json:"ring"`
	RingName string `json:"ringName,omitempty"`
	Approval
	Partial bool `json:"partial,omitempty"`
}
