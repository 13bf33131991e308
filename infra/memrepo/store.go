package memrepo

import (
	"time"

	"github.com/executor-dev/executor/domain/plan"
)

// Bounds of StoreOptions.SweepEvery's default.
const (
	minSweepEvery = 10 * time.Millisecond
	maxSweepEvery = time.Minute
)

// StoreOptions configures the embedded store (NewStore).
type StoreOptions struct {
	// Retention is how long the store keeps an ended plan (COMPLETED, FAILED, CANCELLED) with
	// everything of it, from its end (the write of its ended status; a later write of it ended
	// counts from there, a plan active again keeps everything until its next end): Redis's TTL
	// of an ended plan's keys (redisrepo.Options.TTL). 0 or negative: everything is kept.
	Retention time.Duration
	// Clock is when a plan's end is written, and when the sweep runs; default time.Now.
	Clock func() time.Time
	// SweepEvery is how often the sweep Start runs looks for plans whose retention ran out;
	// default a tenth of Retention, at least 10 ms and at most a minute. A plan is forgotten
	// between Retention and Retention + SweepEvery after its end.
	SweepEvery time.Duration
}

// NewStore returns an empty database that serves as the embedded store (serve without
// --redis): it keeps everything stored in it, as New does, until an ended plan has stayed
// ended for opts.Retention; then it forgets the plan and everything of it (Sweep), as Redis
// lets an ended plan's keys expire. Start runs the sweep in the background until Stop.
func NewStore(opts StoreOptions) *DB {
	db := New()
	if opts.Retention <= 0 {
		return db
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.SweepEvery <= 0 {
		opts.SweepEvery = min(max(opts.Retention/10, minSweepEvery), maxSweepEvery)
	}
	db.expiry = newExpiry(opts.Retention)
	db.clock = opts.Clock
	db.sweeper.every = opts.SweepEvery
	return db
}

// expire gives p, just stored, the retention from now when it has ended, and takes the
// retention away from it when it is active: a plan an operator's retry made active again.
// Nothing on a DB that keeps everything (New, NewMirror). The caller holds the write lock.
func (db *DB) expire(p *plan.Plan) {
	if db.expiry == nil {
		return
	}
	if p.Status().Terminal() {
		db.expiry.ended(p.ID(), db.clock())
		return
	}
	db.expiry.active(p.ID())
}
