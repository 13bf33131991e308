package notify

import (
	"context"
	"time"

	"github.com/executor-dev/executor/domain/plan"
)

// Deliveries stores where the deliveries of the plans' notices stand, shared by every
// executor. Implementations: infra/redisrepo (Redis), infra/memrepo (memory).
type Deliveries interface {
	// Pending returns up to n plans that may have notices left to deliver.
	Pending(ctx context.Context, n int) ([]string, error)
	// Delivered tells that plan planID has nothing left to deliver up to its notice
	// lastNotice (it leaves Pending until it has a later one).
	Delivered(ctx context.Context, planID, lastNotice string) error
	// States returns the stored state of each delivery of plan planID (absent: never tried).
	States(ctx context.Context, planID string) (map[string]plan.Delivery, error)
	// Claim takes delivery k of plan planID for owner until until, when it is not done and no
	// other owner's claim runs at now; it returns the state and whether it is owner's.
	Claim(ctx context.Context, planID string, k string, owner string, now, until time.Time) (plan.Delivery, bool, error)
	// Record stores st as delivery k's state after owner's attempt, its claim released; a
	// claim another owner took meanwhile (owner's ran out) keeps the other's.
	Record(ctx context.Context, planID string, k string, owner string, st plan.Delivery) error
}
