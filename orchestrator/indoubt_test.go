package orchestrator_test

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// Every stage call carries the run's fence epoch; the retry of a stage whose last attempt is in
// doubt (the run was taken over while it may have been inside the call) sends that attempt's
// Idempotency-Key, so that a target honouring it does the work once.

// callLog records the Requests of a kind's calls.
type callLog struct {
	mu    sync.Mutex
	calls []stage.Request
}

func (c *callLog) add(req stage.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, req)
}

// of returns the recorded calls of stage name.
func (c *callLog) of(name string) []stage.Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []stage.Request
	for _, r := range c.calls {
		if r.Stage == name {
			out = append(out, r)
		}
	}
	return out
}

// recordingStuck registers kind: every call is recorded; run 1's calls tell started and wait
// for their context (they are cut), later runs' calls succeed at once.
func (h *harness) recordingStuck(t *testing.T, kind string) (*callLog, <-chan time.Time) {
	t.Helper()
	log := &callLog{}
	started := make(chan time.Time, 8)
	h.register(t, kind, func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
		log.add(req)
		if req.Run == 1 {
			started <- time.Now()
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return nil, nil
	})
	return log, started
}

func TestTheRetryOfAnInDoubtStageSendsItsIdempotencyKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		cut         func(t *testing.T, h *harness, tenant string)
		wantOutcome task.Outcome
		wantKeyRun  int // the run whose key the retry's deploy call sends
	}{
		{
			name: "taken over by an unlock: in doubt, the same key",
			cut: func(t *testing.T, h *harness, tenant string) {
				out, err := h.svc.UnlockTenant(context.Background(), tenant)
				require.NoError(t, err)
				require.True(t, out.Interrupted)
			},
			wantOutcome: task.OutcomeInDoubt, wantKeyRun: 1,
		},
		{
			name: "cut by its own run (lost lease): interrupted, a new key",
			cut: func(t *testing.T, h *harness, tenant string) {
				_, held, err := h.locker.ForceRelease(context.Background(), tenant)
				require.NoError(t, err)
				require.True(t, held)
			},
			wantOutcome: task.OutcomeInterrupted, wantKeyRun: 2,
		},
	}
	for n, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, 2)
			log, started := h.recordingStuck(t, "rec")
			ctx := context.Background()
			tenant := tenants("id"+string(rune('a'+n)), 1)[0].ID
			p := h.submit(t, app.SubmitRequest{Tenants: []app.TenantInput{{ID: tenant}}, Stages: []stage.Spec{
				{Name: "prep", Kind: "noop", Retry: stage.Policy{MaxAttempts: 1}},
				{Name: "deploy", Kind: "rec", Retry: stage.Policy{MaxAttempts: 1}},
				{Name: "verify", Kind: "rec", Retry: stage.Policy{MaxAttempts: 1}},
			}})
			receive(t, started, "run 1 never called deploy")
			tt.cut(t, h, tenant)
			h.wait(t, p.ID())

			cut, tk := h.lastAttempt(t, tenant)
			require.Equal(t, task.Interrupted, tk.Status())
			assert.Equal(t, tt.wantOutcome, cut.Outcome)
			assert.Equal(t, "deploy", cut.Stage)
			assert.Equal(t, 1, cut.Run)

			_, err := h.svc.RetryTenant(ctx, tenant, true) // run 2, at deploy
			require.NoError(t, err)
			require.Equal(t, plan.Completed, h.wait(t, p.ID()).Plan.Status())
			done := h.tenantTask(t, tenant)

			deploys := log.of("deploy")
			require.Len(t, deploys, 2, "run 1's call, then run 2's")
			first, retry := deploys[0], deploys[1]
			assert.Equal(t, 1, first.Run)
			assert.Zero(t, first.KeyRun, "run 1's stage had no attempt before")
			assert.Equal(t, 2, retry.Run)
			want := p.ID() + "/" + tk.ID() + "/deploy/" + strconv.Itoa(tt.wantKeyRun)
			assert.Equal(t, want, retry.IdempotencyKey())
			if tt.wantOutcome == task.OutcomeInDoubt {
				assert.Equal(t, 1, retry.KeyRun)
				assert.Equal(t, first.IdempotencyKey(), retry.IdempotencyKey(), "the in-doubt attempt's key")
			} else {
				assert.Zero(t, retry.KeyRun)
				assert.NotEqual(t, first.IdempotencyKey(), retry.IdempotencyKey())
			}

			verify := log.of("verify")
			require.Len(t, verify, 1)
			assert.Zero(t, verify[0].KeyRun, "a stage without an in-doubt attempt: its run's key")
			assert.Equal(t, p.ID()+"/"+tk.ID()+"/verify/2", verify[0].IdempotencyKey())

			// Every call carries its run's fence epoch: run 2's is the task's last one, above run 1's.
			assert.Positive(t, first.Fence)
			assert.Greater(t, retry.Fence, first.Fence, "a later run calls with a higher epoch")
			assert.LessOrEqual(t, first.Fence, tk.Fence())
			assert.Equal(t, done.Fence(), retry.Fence)
			assert.Equal(t, done.Fence(), verify[0].Fence)
			assert.Equal(t, tenant+":"+strconv.FormatUint(done.Fence(), 10), retry.FenceToken())
		})
	}
}

// The reaper takes over a RUNNING task whose owner is gone: the attempt its run was in is in
// doubt, and the retry's call of that stage sends the lost run's key.
func TestTheRetryOfAReapedTaskSendsTheLostRunsKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	log, _ := h.recordingStuck(t, "rec")
	ctx := context.Background()
	p := h.submit(t, app.SubmitRequest{ // scheduled far ahead: started below, once the task was reaped and retried
		StartAt: time.Now().Add(time.Hour), Tenants: tenants("rk", 1),
		Stages: []stage.Spec{
			{Name: "deploy", Kind: "rec", Retry: stage.Policy{MaxAttempts: 1}},
			{Name: "verify", Kind: "rec", Retry: stage.Policy{MaxAttempts: 1}},
		},
	})
	lostEpoch := h.orphan(t, "rk-000", time.Now().Add(-2*time.Minute)) // run 1, at deploy, its owner gone
	cut, reaped := h.lastAttempt(t, "rk-000")                          // a read reaps it
	require.Equal(t, task.Interrupted, reaped.Status())
	assert.Equal(t, task.OutcomeInDoubt, cut.Outcome)
	assert.Equal(t, "deploy", cut.Stage)
	assert.Equal(t, 1, cut.Run)

	_, err := h.svc.RetryTenant(ctx, "rk-000", true)
	require.NoError(t, err)
	require.NoError(t, h.orch.StartScheduled(ctx, p.ID()))
	require.Equal(t, plan.Completed, h.wait(t, p.ID()).Plan.Status())

	deploys := log.of("deploy")
	require.Len(t, deploys, 1, "the lost run's call is not seen here: only run 2's")
	assert.Equal(t, 2, deploys[0].Run)
	assert.Equal(t, 1, deploys[0].KeyRun)
	assert.Equal(t, p.ID()+"/"+reaped.ID()+"/deploy/1", deploys[0].IdempotencyKey(), "the lost run's key")
	assert.Greater(t, deploys[0].Fence, lostEpoch)
	verify := log.of("verify")
	require.Len(t, verify, 1)
	assert.Equal(t, p.ID()+"/"+reaped.ID()+"/verify/2", verify[0].IdempotencyKey())
}
