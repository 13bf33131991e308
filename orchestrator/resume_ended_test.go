package orchestrator_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// A plan paused for a lost executor is not settled when its last tasks end meanwhile (an
// operator cancelled the interrupted one): an SRE must read why it paused. When the SRE then
// resumes it, nothing is left to run, so the resume settles it (chaos seed 777: a plan
// RUNNING for good, every task ended, its queue empty).
func TestResumingAPlanWhoseTasksAllEndedSettlesIt(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	release := make(chan struct{})
	h.register(t, "block", func(ctx context.Context, _ stage.Request) (json.RawMessage, error) {
		select {
		case <-release:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("re", 2), Stages: stages("block", "one")})
	eventually(t, "both tasks run", func() bool {
		return h.tenantStatus(t, "re-000") == task.Running && h.tenantStatus(t, "re-001") == task.Running
	})

	// As the reconciler leaves such a plan: PAUSED for a reason; then its tasks end.
	ctx := context.Background()
	_, err := h.db.Plans().Update(ctx, p.ID(), func(p *plan.Plan) error {
		return p.PauseFor("executor exec-c lost mid-plan; interrupted tenants: re-000", time.Now())
	})
	require.NoError(t, err)
	close(release)
	eventually(t, "both tasks end", func() bool {
		return h.tenantStatus(t, "re-000") == task.Completed && h.tenantStatus(t, "re-001") == task.Completed
	})
	paused, err := h.db.Plans().Plan(ctx, p.ID())
	require.NoError(t, err)
	require.Equal(t, plan.Paused, paused.Status(), "left for an SRE, not settled")

	require.NoError(t, h.orch.ResumePlan(ctx, p.ID(), false))
	got, err := h.db.Plans().Plan(ctx, p.ID())
	require.NoError(t, err)
	require.Equal(t, plan.Completed, got.Status(), "settled by the resume, not RUNNING with nothing to run")
}
