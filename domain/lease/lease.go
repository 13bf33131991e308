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
	Owner string        // <planId>:<taskId> of the holding run
	TTL   time.Duration // time left before it expires unless refreshed; 0 when it never expires
}
