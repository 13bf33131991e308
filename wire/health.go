package wire

import "time"

// Health is the body of /healthz and /readyz.
type Health struct {
	Status   string     `json:"status"`             // "ok"; "degraded" (readyz, a 503) while Redis is away; "unavailable" (a 503) when the probe's write or read failed, or Redis was not reached since the start
	Executor string     `json:"executor,omitempty"` // the serving executor's name (Options.Name)
	Redis    string     `json:"redis,omitempty"`    // "ok" | "degraded" | "unavailable" | "disabled" (readyz)
	Since    *time.Time `json:"since,omitempty"`    // degraded: since when
	Journal  *int       `json:"journal,omitempty"`  // degraded: aggregates waiting to be written back
	Reason   string     `json:"reason,omitempty"`   // degraded: the Redis error that began the outage; unavailable: the probe's error
	// Topology is, on Redis (readyz), "shared" (several executors share the Redis, the only
	// source of truth) or "alone" (the only executor on its Redis: it runs on memory while
	// Redis is away).
	Topology string `json:"topology,omitempty"`
	// Phase is, on Redis (readyz), where the executor stands, the first that holds of
	// "draining", "not_ready", "degraded", "claims_paused" (new claims wait after Redis lost
	// its data) and "online"; omitted when /readyz's own probe of Redis failed first
	// (status "unavailable").
	Phase string `json:"phase,omitempty"`
}
