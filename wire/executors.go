package wire

import "time"

// Executor is one executor of the cluster as GET /v1/executors lists it.
type Executor struct {
	Name          string    `json:"name"`
	Address       string    `json:"address"`
	Version       string    `json:"version,omitempty"`
	StartedAt     time.Time `json:"startedAt"`
	LastHeartbeat time.Time `json:"lastHeartbeat"`
	Runs          int       `json:"runs"`  // tasks it was running at its last heartbeat (every lease TTL/3); the answering executor's: now
	Alive         bool      `json:"alive"` // it refreshed its liveness within the lease TTL
	Self          bool      `json:"self"`  // it is the executor that answered
	// Topology is how it was started: "shared" (several executors share the Redis, the only
	// source of truth) or "alone" (one executor on its Redis, running on memory while Redis is
	// away).
	Topology string `json:"topology,omitempty"`
	// Kinds are the stage kinds it can run (built-in and custom), sorted.
	Kinds []string `json:"kinds,omitempty"`
}

// ExecutorList is the body of GET /v1/executors, sorted by name.
type ExecutorList struct {
	Executors []Executor `json:"executors"`
}
