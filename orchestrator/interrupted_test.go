package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// Every stage attempt that started has a ledger entry: one cut short is "interrupted", with
// the class that says why, written by whoever learns of it (docs/api.md, the attempt ledger);
// one whose run was taken over while it may have been inside the call is "in_doubt".

// lastAttempt returns the last entry of the tenant's ledger, and the task.
func (h *harness) lastAttempt(t *testing.T, tenant string) (task.Attempt, *task.Task) {
	t.Helper()
	tk := h.tenantTask(t, tenant)
	ledger := tk.Ledger()
	require.NotEmpty(t, ledger, "tenant %s has no attempt", tenant)
	return ledger[len(ledger)-1], tk
}

// entered registers kind: each attempt tells started when it begins, then waits for its
// context.
func (h *harness) entered(t *testing.T, kind string) <-chan time.Time {
	t.Helper()
	started := make(chan time.Time, 8)
	h.register(t, kind, func(ctx context.Context, _ stage.Request) (json.RawMessage, error) {
		started <- time.Now()
		<-ctx.Done()
		return nil, ctx.Err()
	})
	return started
}

func receive(t *testing.T, ch <-chan time.Time, what string) time.Time {
	t.Helper()
	select {
	case at := <-ch:
		return at
	case <-time.After(10 * time.Second):
		require.FailNow(t, what)
		return time.Time{}
	}
}

// backoffStages is one stage of kind that is retried after a long backoff.
func backoffStages(kind string) []stage.Spec {
	return []stage.Spec{{Name: "deploy", Kind: kind,
		Retry: stage.Policy{MaxAttempts: 3, InitialBackoff: time.Hour, MaxBackoff: time.Hour, Jitter: stage.JitterNone}}}
}

func TestCancelDuringTheBackoffRecordsTheAttemptThatNeverStarted(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	h.register(t, "flaky", func(context.Context, stage.Request) (json.RawMessage, error) {
		return nil, stage.Retryable(errors.New("503"))
	})
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("cb", 1), Stages: backoffStages("flaky")})
	eventually(t, "the first attempt failed and its retry waits", func() bool {
		return len(h.tenantTask(t, "cb-000").Ledger()) == 1
	})
	_, err := h.svc.CancelTenant(context.Background(), "cb-000")
	require.NoError(t, err)
	h.wait(t, p.ID())

	cut, tk := h.lastAttempt(t, "cb-000")
	assert.Equal(t, task.Cancelled, tk.Status())
	require.Len(t, tk.Ledger(), 2, "the failed attempt, then the one the cancel cut")
	failed := tk.Ledger()[0]
	assert.Equal(t, task.OutcomeFailed, failed.Outcome)
	assert.Equal(t, task.Attempt{StageIndex: 0, Stage: "deploy", Run: 1, Attempt: 2, StartedAt: cut.EndedAt, EndedAt: cut.EndedAt,
		Outcome: task.OutcomeInterrupted, Class: stage.ClassCancelled, Error: cut.Error}, cut,
		"attempt 2 never started: cut during the backoff")
	assert.True(t, cut.EndedAt.Before(failed.EndedAt.Add(failed.Backoff)), "before attempt 2 was due")
	assert.Contains(t, cut.Error, failed.EndedAt.Add(failed.Backoff).UTC().Format(time.RFC3339Nano), "the entry says when it was due")
}

func TestShutdownMidStageRecordsTheAttemptItCut(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	started := h.entered(t, "stuck")
	h.submit(t, app.SubmitRequest{Tenants: tenants("sm", 1), Stages: stages("stuck", "one")})
	enteredAt := receive(t, started, "the stage never started")
	require.NoError(t, <-shutdown(t, h))

	cut, tk := h.lastAttempt(t, "sm-000")
	assert.Equal(t, task.Interrupted, tk.Status())
	require.Len(t, tk.Ledger(), 1)
	assert.Equal(t, task.OutcomeInterrupted, cut.Outcome)
	assert.Equal(t, stage.ClassShutdown, cut.Class)
	assert.Equal(t, tk.LastError().Message, cut.Error, "the run recorded its own entry: it says why, nothing derived")
	assert.False(t, cut.StartedAt.After(enteredAt), "its exact start")
	assert.False(t, cut.StartedAt.Before(tk.StartedAt()))
}

func TestALostLeaseRecordsTheAttemptItCut(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	started := h.entered(t, "stuck")
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("ll", 1), Stages: stages("stuck", "one")})
	receive(t, started, "the stage never started")
	_, held, err := h.locker.ForceRelease(context.Background(), "ll-000") // the lease is gone under the run
	require.NoError(t, err)
	require.True(t, held)
	h.wait(t, p.ID())

	cut, tk := h.lastAttempt(t, "ll-000")
	assert.Equal(t, task.Interrupted, tk.Status())
	require.Len(t, tk.Ledger(), 1)
	assert.Equal(t, task.OutcomeInterrupted, cut.Outcome)
	assert.Equal(t, stage.ClassLeaseLost, cut.Class)
	assert.Equal(t, tk.LastError().Message, cut.Error, "written by the run itself")
}

// An operator's unlock fences the run (it writes nothing more): the unlock records the
// attempt it cut, derived from what is stored.
func TestAFencedRunsAttemptIsRecordedByTheFencer(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	started := h.entered(t, "stuck")
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("fe", 1), Stages: stages("stuck", "one")})
	enteredAt := receive(t, started, "the stage never started")
	out, err := h.svc.UnlockTenant(context.Background(), "fe-000")
	require.NoError(t, err)
	require.True(t, out.Interrupted)
	h.wait(t, p.ID())

	cut, tk := h.lastAttempt(t, "fe-000")
	assert.Equal(t, task.Interrupted, tk.Status())
	require.Len(t, tk.Ledger(), 1, "one entry: the fenced run wrote none")
	assert.Equal(t, task.OutcomeInDoubt, cut.Outcome, "the fenced run may have been inside the call")
	assert.Equal(t, stage.ClassLeaseLost, cut.Class)
	assert.Equal(t, 1, cut.Attempt)
	assert.False(t, cut.StartedAt.After(enteredAt), "at the earliest it could have started")
	assert.False(t, cut.EndedAt.Before(enteredAt))
}

// A run whose executor stopped heart-beating is reaped: the reaper records the attempt it was
// in, the next after its last failed one; a retry keeps the ledger and clears the last error.
func TestTheReaperRecordsTheAttemptOfARunThatStoppedBeating(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	ctx := context.Background()
	h.submit(t, app.SubmitRequest{ // scheduled far ahead: nothing here runs its tasks
		StartAt: time.Now().Add(time.Hour), Tenants: tenants("rp", 1), Stages: stages("noop", "one", "two"),
	})
	stale := time.Now().Add(-2 * time.Minute).UTC().Truncate(time.Millisecond)
	h.orphan(t, "rp-000", stale)
	tk, err := h.db.Tasks().Latest(ctx, "rp-000")
	require.NoError(t, err)
	failed := task.Attempt{StageIndex: 0, Stage: "one", Run: 1, Attempt: 1, StartedAt: stale, EndedAt: stale.Add(time.Second),
		Outcome: task.OutcomeFailed, Class: stage.ClassRetryable, Error: "503", Code: 503, Backoff: 2 * time.Second}
	require.NoError(t, tk.Record(failed)) // its last write: attempt 1 failed, attempt 2 due 2 s later
	require.NoError(t, h.db.Tasks().Save(ctx, tk, nil))

	readAt := time.Now()
	cut, reaped := h.lastAttempt(t, "rp-000") // a read reaps it
	assert.Equal(t, task.Interrupted, reaped.Status())
	require.Len(t, reaped.Ledger(), 2)
	assert.Equal(t, task.OutcomeInDoubt, cut.Outcome, "the lost run may have been inside the call")
	assert.Equal(t, stage.ClassLeaseLost, cut.Class)
	assert.Equal(t, 2, cut.Attempt, "the attempt after the failed one")
	assert.True(t, cut.StartedAt.Equal(stale.Add(3*time.Second)), "at the earliest when it was due: %s", cut.StartedAt)
	assert.False(t, cut.EndedAt.Before(readAt), "when the reaper learned of it")

	v, err := h.svc.RetryTenant(ctx, "rp-000", true)
	require.NoError(t, err)
	assert.Equal(t, 2, v.Task.Attempt())
	assert.Nil(t, v.Task.LastError(), "a retry clears the last error")
	// The new run may have started (and recorded attempts) before the retry's answer was read.
	require.GreaterOrEqual(t, len(v.Task.Ledger()), len(reaped.Ledger()))
	assert.Equal(t, reaped.Ledger(), v.Task.Ledger()[:len(reaped.Ledger())], "the ledger keeps the story")
}

// A Retry-After above the cap waits the cap, and the attempt's entry says so.
func TestACappedRetryAfterIsRecorded(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	h.register(t, "throttled", func(context.Context, stage.Request) (json.RawMessage, error) {
		return nil, &stage.Error{Class: stage.ClassRetryable, Code: 503, Message: "busy", RetryAfter: time.Hour}
	})
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("ra", 1), Stages: backoffStages("throttled")})
	eventually(t, "the first attempt failed", func() bool { return len(h.tenantTask(t, "ra-000").Ledger()) == 1 })
	first := h.tenantTask(t, "ra-000").Ledger()[0]
	assert.Equal(t, stage.MaxRetryAfter, first.Backoff)
	assert.Equal(t, "busy (Retry-After 3600s capped to 10m0s)", first.Error)
	_, err := h.svc.CancelTenant(context.Background(), "ra-000")
	require.NoError(t, err)
	h.wait(t, p.ID())
}
