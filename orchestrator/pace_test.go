package orchestrator_test

import (
	"context"
	"encoding/json"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
)

func TestStartRatePacesTaskStarts(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	var mu sync.Mutex
	var starts []time.Time
	h.register(t, "stamped", func(context.Context, stage.Request) (json.RawMessage, error) {
		mu.Lock()
		starts = append(starts, time.Now())
		mu.Unlock()
		return nil, nil
	})
	// 600 starts a minute: one every 100 ms, although concurrency would allow 4 at once.
	p := h.submit(t, app.SubmitRequest{MaxConcurrency: 4, StartRate: 600, Tenants: tenants("pace", 4), Stages: stages("stamped", "one")})
	v := h.wait(t, p.ID())
	require.Equal(t, plan.Completed, v.Plan.Status())
	assert.Equal(t, 600, v.Plan.StartRate())

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, starts, 4)
	sort.Slice(starts, func(i, j int) bool { return starts[i].Before(starts[j]) })
	// Only a lower bound, and half the interval: claims are 100 ms apart, and a busy machine
	// may take a run longer to reach its stage than the next one.
	for i := 1; i < len(starts); i++ {
		gap := starts[i].Sub(starts[i-1])
		assert.GreaterOrEqual(t, gap, 50*time.Millisecond, "start %d came %v after the previous one", i, gap)
	}
}

func TestStartRatePacingStopsForCancel(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 8)
	// One start a minute: the second task would wait a minute; a cancel must not.
	p := h.submit(t, app.SubmitRequest{MaxConcurrency: 2, StartRate: 1, Tenants: tenants("slow", 2), Stages: stages("noop", "one")})
	eventually(t, "the first task ran", func() bool { return h.tenantStatus(t, "slow-000") == "COMPLETED" })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	v, err := h.svc.CancelPlan(ctx, p.ID())
	require.NoError(t, err)
	assert.Equal(t, plan.Cancelled, v.Plan.Status())
	assert.Equal(t, 0, h.orch.Queued(), "the paced task left the queue")
}
