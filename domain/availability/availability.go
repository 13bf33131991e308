package availability

import "time"

// Phase names where an executor stands, the one of its State that decides first.
type Phase string

// The phases, from the one that decides first.
const (
	// Draining: the executor is shutting down; it starts no more work.
	Draining Phase = "draining"
	// NotReady: the store was not reached since the executor started, or it refuses what the
	// executor needs (a password, an ACL permission, a TLS certificate): the executor cannot
	// tell which tenants others run, so it takes no new work and answers no query.
	NotReady Phase = "not_ready"
	// Degraded: the store does not answer now. Shared, the executor refuses what it cannot
	// see; alone, it goes on with its memory.
	Degraded Phase = "degraded"
	// ClaimsPaused: the store lost its data lately; new tenant claims wait while every
	// executor writes back what it holds.
	ClaimsPaused Phase = "claims_paused"
	// Online: the store answers and nothing holds the executor back.
	Online Phase = "online"
)

// State is an executor's availability at one instant.
type State struct {
	// Shared: other executors share the store (the `shared` topology): the store is the only
	// source of truth. Fixed for the executor's life.
	Shared bool
	// Reached: the store was reached since the executor started and grants what it needs.
	Reached bool
	// Degraded: the store does not answer now.
	Degraded bool
	// ClaimsPaused: how long new tenant claims still wait after the store lost its data (0:
	// they do not).
	ClaimsPaused time.Duration
	// Draining: the executor is shutting down.
	Draining bool
}

// Up is the State of an executor whose store answers, at its start: Reached, nothing else.
func Up() State { return State{Reached: true} }

// Phase is the phase of s that decides first (see the package invariants).
func (s State) Phase() Phase {
	switch {
	case s.Draining:
		return Draining
	case !s.Reached:
		return NotReady
	case s.Degraded:
		return Degraded
	case s.ClaimsPaused > 0:
		return ClaimsPaused
	default:
		return Online
	}
}

// Func adapts a func to a port that answers a State.
type Func func() State

// Availability calls f.
func (f Func) Availability() State { return f() }
