package lease

import (
	"context"
	"errors"
	"time"
)

// ErrHeld is returned when the tenant's lease is held by another run.
var ErrHeld = errors.New("lease: tenant is held by another run")

// Lease is a held tenant lease.
type Lease interface {
	// Release gives the lease up. Releasing a lost lease is not an error.
	Release(ctx context.Context) error
	// Lost is closed when the lease is lost before Release.
	Lost() <-chan struct{}
	// AfterLost arranges for f to run, on a goroutine of its own, once the lease is lost (as
	// Lost closes; at once if it has): a holder needs no goroutine waiting on Lost. stop
	// unregisters f and reports whether it stopped f from being run, as context.AfterFunc's.
	AfterLost(f func()) (stop func() bool)
	// Deadline is the instant, on this process's monotonic clock, after which the holder
	// must assume the lease may be gone and stop (a self-fencing lease: the last refresh the
	// store confirmed, counted from when it was sent, plus the TTL less Margin); Lost closes
	// then at the latest. The zero time: the lease does not self-fence (it lasts until Lost
	// closes or Release).
	Deadline() time.Time
}

// Margin is how much earlier than its TTL a self-fencing lease counts itself gone: room for
// the drift between the holder's clock and the store's, and for the time the holder takes to
// stop its run once the deadline passes. A reader judging the holder gone waits the TTL plus
// Margin since the holder's last sign of life, so that the holder has stopped by then.
func Margin(ttl time.Duration) time.Duration {
	return max(ttl/5, minMargin)
}

// minMargin is Margin's floor.
const minMargin = 10 * time.Millisecond

// Valid reports whether a lease with deadline d still holds at now: d is zero (no
// self-fencing) or later than now.
func Valid(d, now time.Time) bool { return d.IsZero() || now.Before(d) }

// Holder describes who holds a tenant's lease.
type Holder struct {
	Owner string        // <planId>:<taskId>@<executor> of the holding run
	TTL   time.Duration // time left before it expires unless refreshed; 0 when it never expires
}

// Unlocked is what an operator's unlock of a tenant did.
type Unlocked struct {
	TenantID    string
	Released    bool   // a lease was held and is removed
	Previous    Holder // who held it, when Released
	TaskID      string // the tenant's latest task, if any
	Epoch       uint64 // that task's fence epoch after the unlock: the old holder's writes carry an older one
	Interrupted bool   // the task was RUNNING: it is INTERRUPTED now (retry it to go on)
}
