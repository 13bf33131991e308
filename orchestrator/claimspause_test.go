package orchestrator_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/availability"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/orchestrator"
)

// While the store's claims pause lasts (Redis lost data: the executors write back what they
// hold), no task is claimed from the queue, whose entries may be ones the loss brought back
// for tasks that run or ended elsewhere; once it is over, the plan runs.
func TestNoTaskIsClaimedWhileClaimsArePaused(t *testing.T) {
	t.Parallel()
	var paused atomic.Bool
	paused.Store(true)
	h := newHarnessWith(t, orchestrator.Config{Workers: 2, Availability: availability.Func(func() availability.State {
		st := availability.Up()
		if paused.Load() {
			st.ClaimsPaused = 50 * time.Millisecond
		}
		return st
	})})
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("cp", 3), Stages: stages("noop", "one")})
	time.Sleep(300 * time.Millisecond) // several rounds of the dispatch loop
	for _, tn := range []string{"cp-000", "cp-001", "cp-002"} {
		require.Equal(t, task.Pending, h.tenantStatus(t, tn), "%s is not started while claims are paused", tn)
	}
	paused.Store(false)
	require.Equal(t, plan.Completed, h.wait(t, p.ID()).Plan.Status())
}
