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
}

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
