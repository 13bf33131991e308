package memrepo

import (
	"time"

	"github.com/executor-dev/executor/infra/due"
)

// expiry is the embedded store's index of its ended plans by the time their retention runs
// out (NewStore), so that a plan's later end moves it, its return to activity takes it out,
// and the sweep finds what is due without reading any other plan. Not safe for concurrent
// use: the DB's write lock guards it.
type expiry struct {
	ttl   time.Duration // the retention
	plans due.Queue
}

func newExpiry(ttl time.Duration) *expiry { return &expiry{ttl: ttl} }

// ended gives plan id, written ended at now, the retention from now, replacing the one an
// earlier write gave it (as each write of an ended plan to Redis sets its TTL again).
func (e *expiry) ended(id string, now time.Time) { e.plans.Set(id, now.Add(e.ttl)) }

// active takes the retention away from plan id: it is active (again), or no longer stored.
func (e *expiry) active(id string) { e.plans.Remove(id) }

// due takes out and returns the plan whose retention ran out first, if one ran out by now.
func (e *expiry) due(now time.Time) (string, bool) { return e.plans.Pop(now) }
