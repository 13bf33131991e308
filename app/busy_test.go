package app_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/orchestrator"
	"github.com/executor-dev/executor/stagekind"
)

// busyRunner is the real orchestrator reporting a queue and worker cap of the test's choosing.
type busyRunner struct {
	app.Launcher
	queued  *atomic.Int64
	workers int
}

func (r busyRunner) Queued() int  { return int(r.queued.Load()) }
func (r busyRunner) Workers() int { return r.workers }

// busyService is a Service on the memory store whose runner reports the returned count of
// queued tasks (initially queued) and workers slots, with limits.
func busyService(t *testing.T, queued, workers int, limits app.Limits) (*app.Service, *atomic.Int64) {
	t.Helper()
	db := memrepo.New()
	locker := lock.NewMemory()
	kinds := stagekind.Builtin(stagekind.HTTPOptions{})
	st := apptest.Stores{Creator: db, Plans: db.Plans(), Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Index: db.Tasks(), Locker: locker}
	_, orch := apptest.New(t, st, kinds, orchestrator.Config{})
	n := new(atomic.Int64)
	n.Store(int64(queued))
	return app.New(app.Deps{
		Creator: db, Plans: db.Plans(), Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Index: db.Tasks(),
		Kinds: kinds, Holders: locker, Launcher: busyRunner{Launcher: orch, queued: n, workers: workers}, PlanControl: orch, TaskControl: orch, Reaper: orch, Watcher: orch, Unlocker: orch,
		Limits: limits,
	}), n
}

func numberedPlan(prefix string, n int) app.SubmitRequest {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%03d", prefix, i)
	}
	return sleepPlan(ids...)
}

func TestSubmitIsRefusedWhenTheQueueIsFull(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		queued, workers int
		tenants         int
		retryAfter      time.Duration
	}{
		{"one over", 99, 64, 2, time.Second},
		{"full", 100, 4, 10, 3 * time.Second}, // 10 over, 4 slots: 3 rounds of a nominal second
		{"far over", 100, 1, 100, app.MaxRetryAfter},
		{"no worker count", 100, 0, 3, 3 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, _ := busyService(t, tc.queued, tc.workers, app.Limits{MaxQueued: 100})
			_, err := svc.Submit(context.Background(), numberedPlan("busy", tc.tenants))
			require.ErrorIs(t, err, app.ErrBusy)
			var be *app.BusyError
			require.ErrorAs(t, err, &be)
			assert.Equal(t, app.BusyError{Queued: tc.queued, Tenants: tc.tenants, Limit: 100, RetryAfter: tc.retryAfter}, *be)
			assert.Equal(t, 0, countPlans(t, svc), "nothing was created")
		})
	}
}

// A full queue refuses new plans only: dry runs, idempotent replays and an operator's retry
// go through.
func TestFullQueueSparesDryRunsReplaysAndRetries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, queued := busyService(t, 0, 64, app.Limits{MaxQueued: 3})
	req := numberedPlan("fit", 3)
	req.IdempotencyKey = "fits"
	first, err := svc.Submit(ctx, req)
	require.NoError(t, err, "a plan that exactly fills the queue fits")

	queued.Store(3)
	_, err = svc.Submit(ctx, numberedPlan("late", 1))
	require.ErrorIs(t, err, app.ErrBusy)

	dry := numberedPlan("dry", 2)
	dry.DryRun = true
	_, err = svc.Submit(ctx, dry)
	require.NoError(t, err, "a dry run queues nothing")

	again, err := svc.Submit(ctx, req)
	require.NoError(t, err)
	assert.True(t, again.Replayed)
	assert.Equal(t, first.Plan.Plan.ID(), again.Plan.Plan.ID())

	_, err = svc.CancelTenant(ctx, "fit-000")
	require.NoError(t, err)
	_, err = svc.RetryTenant(ctx, "fit-000", false)
	require.NoError(t, err, "a retry is never refused for a full queue")
	assert.Equal(t, 1, countPlans(t, svc))
}
