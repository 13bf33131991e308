// Package availability says where an executor stands with its store at one instant: one
// State, read through one port by every part that must act on it (the use cases refuse what
// the executor cannot do now, the orchestrator claims and judges nothing it cannot see, GET
// /readyz reports it).
//
// Invariants: a State is a value, read whole at one instant; its Phase is the one that
// decides first: Draining, then NotReady, Degraded, ClaimsPaused, else Online. An executor
// alone on an in-memory store is always Reached and never Degraded.
package availability
