package orchestrator_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// A task whose checkpoint has every stage done (its run ended between its last stage and its
// completion, as runs before the last stage's write also completed the task could) is
// completed by a retry from the checkpoint, running no stage again.
func TestRetryFromACheckpointWithEveryStageDoneRunsNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	var calls atomic.Int32
	h.register(t, "count", func(context.Context, stage.Request) (json.RawMessage, error) {
		calls.Add(1)
		return nil, nil
	})
	names := []string{"one", "two"}
	p := h.submit(t, app.SubmitRequest{StartAt: time.Now().Add(time.Hour), Tenants: tenants("done", 1), Stages: stages("count", names...)})
	ctx := context.Background()
	id := p.TaskIDs()[0]
	now := time.Now()

	tk, err := h.db.Tasks().BumpFence(ctx, id)
	require.NoError(t, err)
	require.NoError(t, tk.Start(tk.Fence(), now))
	cp := checkpoint.New(id)
	for i, name := range names {
		require.NoError(t, tk.Record(task.Attempt{StageIndex: i, Stage: name, Run: 1, Attempt: 1, StartedAt: now, EndedAt: now, Outcome: task.OutcomeSucceeded}))
		require.NoError(t, tk.CompleteStage(i, now))
		require.NoError(t, cp.Record(i, name, nil, tk.Fence(), now))
	}
	require.NoError(t, tk.Interrupt(task.Failure{Class: stage.ClassLeaseLost, Message: "owner died"}, now))
	require.NoError(t, h.db.Tasks().Save(ctx, tk, cp))

	_, err = h.svc.RetryTenant(ctx, "done-000", true)
	require.NoError(t, err)
	eventually(t, "the task completes", func() bool { return h.tenantStatus(t, "done-000") == task.Completed })
	require.Zero(t, calls.Load(), "no stage ran again")
	require.Equal(t, len(names), h.tenantTask(t, "done-000").CurrentStage())
}
