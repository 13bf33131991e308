package orchestrator_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/orchestrator"
)

// refreshingPlans is the in-memory plan store, as a store that holds copies of plans: it
// records the plans it is asked to read again.
type refreshingPlans struct {
	*memrepo.PlanRepo
	mu  sync.Mutex
	ids []string
}

func (r *refreshingPlans) Refresh(_ context.Context, planID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids = append(r.ids, planID)
}

func (r *refreshingPlans) refreshed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ids...)
}

// A plan's signal (its status changed, maybe on another executor) has a store that holds
// copies of plans read it again: the Redis store's mirror lets go of a plan another executor
// ended. Task signals do not.
func TestAPlanSignalRefreshesTheStoresCopy(t *testing.T) {
	t.Parallel()
	db := memrepo.New()
	plans := &refreshingPlans{PlanRepo: db.Plans()}
	_, orch := apptest.New(t, apptest.Stores{
		Creator: db, Plans: plans, Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Locker: lock.NewMemory(),
	}, nil, orchestrator.Config{})
	orch.Receive("cancel 01KAS0000000000000000TASK0")
	orch.Receive("pause 01KAS0000000000000000TASK0")
	orch.Receive("plan 01KAS0000000000000000PLAN0")
	require.Equal(t, []string{"01KAS0000000000000000PLAN0"}, plans.refreshed())
}
