package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/stagekind"
)

// The executor that took a submission died after it created the plan, before it launched it
// (PENDING) or after it started it but before its tasks were queued in Redis (RUNNING): the
// client's retry with the same idempotency key, through another executor, replays the plan
// and makes it run.
func TestAReplayedSubmissionRunsAPlanWhoseLaunchWasCutShort(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		started bool
	}{
		{"created, never launched", false},
		{"started, its tasks never queued", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st, cfg := redisWired(t)
			svc, _ := apptest.New(t, st, stagekind.Builtin(stagekind.HTTPOptions{}), cfg)
			specs := []stage.Spec{{Name: "one", Kind: "noop"}}
			now := time.Now()
			planID := ulid.Make().String()
			var tasks []*task.Task
			var ids []string
			for _, tn := range []string{"rl-1", "rl-2"} {
				tk, err := task.New(planID, tn, nil, specs, now)
				require.NoError(t, err)
				tasks, ids = append(tasks, tk), append(ids, tk.ID())
			}
			p, err := plan.New(plan.Draft{ID: planID, Name: "cut", Stages: specs, TaskIDs: ids, IdempotencyKey: "cut-" + tc.name}, now)
			require.NoError(t, err)
			require.NoError(t, st.Creator.CreatePlan(ctx, p, tasks), "the first executor created it")
			if tc.started {
				_, err := st.Plans.Update(ctx, planID, func(p *plan.Plan) error { return p.Start(now) })
				require.NoError(t, err)
			}

			req := app.SubmitRequest{Name: "cut", IdempotencyKey: "cut-" + tc.name, Stages: specs,
				Tenants: []app.TenantInput{{ID: "rl-1"}, {ID: "rl-2"}}}
			sub, err := svc.Submit(ctx, req)
			require.NoError(t, err)
			require.True(t, sub.Replayed)
			require.Equal(t, planID, sub.Plan.Plan.ID())
			require.Eventually(t, func() bool {
				v, err := svc.Plan(ctx, planID)
				return err == nil && v.Plan.Status() == plan.Completed
			}, 10*time.Second, 10*time.Millisecond, "the replay made the plan run")
		})
	}
}
