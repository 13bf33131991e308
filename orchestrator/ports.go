package orchestrator

import (
	"context"

	"github.com/executor-dev/executor/domain/lease"
	"github.com/executor-dev/executor/domain/stage"
)

// Kinds resolves a stage kind to its handler.
type Kinds interface {
	Handler(kind string) (stage.Handler, bool)
}

// Locker hands out tenant leases.
type Locker interface {
	// Acquire takes tenantID's lease for owner, or fails with lease.ErrHeld.
	Acquire(ctx context.Context, tenantID, owner string) (lease.Lease, error)
	// Holder reports who holds tenantID's lease, if anyone.
	Holder(ctx context.Context, tenantID string) (lease.Holder, bool, error)
}

// leaseOwner is the owner a run records in its tenant's lease.
func leaseOwner(planID, taskID string) string { return planID + ":" + taskID }
