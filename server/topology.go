package server

import (
	"fmt"
	"time"

	"github.com/executor-dev/executor/domain/lease"
	"github.com/executor-dev/executor/infra/redisconn"

	"github.com/executor-dev/executor/wire"
)

// Topology says whether other executors share this executor's Redis (docs/architecture.md,
// "Topologies"). It decides what memory may stand for while Redis is away.
type Topology string

const (
	// TopologyShared (the default with a Redis): several executors share the Redis, which is
	// the only source of truth. A run holds a self-fencing lease, never writes to memory
	// alone, and never starts a stage it could not checkpoint in Redis first; a request that
	// cannot reach Redis answers 503 naming why.
	TopologyShared Topology = "shared"
	// TopologyAlone: one executor on its Redis (serve --topology alone). While Redis is away it
	// keeps running on memory, journals every write and writes it back when Redis answers
	// (docs/degraded.md). It refuses to start on a Redis where another live executor is
	// registered.
	TopologyAlone Topology = "alone"
)

// ParseTopology reads --topology: "shared", "alone", or "" for the default (shared).
func ParseTopology(s string) (Topology, error) {
	switch Topology(s) {
	case "", TopologyShared:
		return TopologyShared, nil
	case TopologyAlone:
		return TopologyAlone, nil
	}
	return "", fmt.Errorf("server: topology %q: want shared or alone", s)
}

// shared reports whether cfg runs on a Redis that other executors may share: Redis is then the
// only source of truth.
func (cfg Config) shared() bool { return cfg.RedisURL != "" && cfg.Topology != TopologyAlone }

// The bounds of a shared executor's Redis client timeout (clientTimeout).
const (
	minClientTimeout = redisconn.Timeout
	maxClientTimeout = 5 * time.Second
)

// clientTimeout bounds every Redis command's dial, read and write, and every wait of the
// runs' pipelined scripts. Alone, 1 s (redisconn.Timeout): a Redis that does not answer soon is
// away, and the executor goes on on memory at once. Shared, the lease TTL less its margin
// (between 1 s and 5 s): no run's write is of use later than that after its lease's last
// confirmed refresh, and a Redis that answers within it is slow, not away: its runs wait for
// it rather than stopping, as long as their leases' refreshes (every TTL/10) and writes land
// before their deadlines. The pipelined writes wait for a free batch behind those in flight
// as well as for their own round trip, so a round trip of 2 s with a 5 s TTL needs the 4 s.
func (cfg Config) clientTimeout() time.Duration {
	if !cfg.shared() {
		return redisconn.Timeout
	}
	ttl := cfg.LeaseTTL
	return min(max(ttl-lease.Margin(ttl), minClientTimeout), maxClientTimeout)
}

// warmConns is how many connections the Redis client readies at start and keeps open while
// idle (redisconn.Config.Warm): shared, enough for the leases' refreshes to find a ready one (a
// new connection costs a round trip before its first command, which on a slow link is what
// pushes a refresh past its lease's deadline); alone, none.
func (cfg Config) warmConns() int {
	if !cfg.shared() {
		return 0
	}
	return min(cfg.workers(), 16)
}

// workers is Config.Workers or its default.
func (cfg Config) workers() int {
	if cfg.Workers > 0 {
		return cfg.Workers
	}
	return DefaultWorkers
}

// topologyReadiness is GET /readyz's answer on Redis: redisReadiness, with the topology.
func (e *Executor) topologyReadiness() wire.Health {
	h := e.redisReadiness()
	h.Topology = string(e.cfg.Topology)
	h.Phase = string(e.Availability().Phase())
	return h
}

// topology is what GET /readyz and the registry of executors report: "alone" on the in-memory
// store (one process by construction).
func (cfg Config) topology() Topology {
	if cfg.shared() {
		return TopologyShared
	}
	return TopologyAlone
}
