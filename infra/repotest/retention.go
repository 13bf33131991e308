package repotest

import (
	"fmt"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/audit"
	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// The retention part of the contract: nothing of an active plan is forgotten, however long
// it runs; once a plan has stayed ended for the retention, the store forgets it and
// everything of it, and reads answer as for what was never stored; an operator's retry that
// makes an ended plan active again takes the retention back.

// Retention is a store that forgets an ended plan once it has stayed ended for TTL (the
// embedded store, memrepo.NewStore; Redis, whose keys of an ended plan get TTL), for
// RunRetention.
type Retention struct {
	Store
	// TTL is the store's retention.
	TTL time.Duration
	// Pass lets d go by for the store: its clock moved on and the store swept, or a real
	// wait.
	Pass func(t *testing.T, d time.Duration)
}

// RunRetention runs the retention part of the contract. newStore is called once per subtest,
// possibly from parallel subtests, and must return an empty store isolated from every other
// one it returned.
func RunRetention(t *testing.T, newStore func(t *testing.T) Retention) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s Retention)
	}{
		{"Retention/ActivePlanIsKept", testRetentionKeepsActivePlans},
		{"Retention/EndedPlanIsForgotten", testRetentionForgetsEndedPlans},
		{"Retention/TenantTakenOverIsKept", testRetentionSparesTakenTenants},
		{"Retention/RetryTakesItBack", testRetentionRetryTakesItBack},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			require.Positive(t, s.TTL, "Retention.TTL")
			require.NotNil(t, s.Pass, "Retention.Pass")
			require.NotNil(t, s.Index, "Store.Index")
			require.NotNil(t, s.Transcripts, "Store.Transcripts")
			tt.fn(t, s)
		})
	}
}

// beyond is how long a test lets pass to be past the retention: half of it again.
func (s Retention) beyond() time.Duration { return s.TTL + s.TTL/2 }

// retained is a plan the retention tests made, with its tasks (one per tenant, in order).
type retained struct {
	plan  *plan.Plan
	tasks []*task.Task
}

// createRetained creates a PENDING plan with key with a task for each tenant, in one step.
func createRetained(t *testing.T, s Retention, key string, now time.Time, tenants ...string) retained {
	t.Helper()
	id := ulid.MustNew(ulid.Timestamp(now), ulid.DefaultEntropy()).String() // as newPlan's
	ids := make([]string, len(tenants))
	tasks := make([]*task.Task, len(tenants))
	for i, tenant := range tenants {
		tk, err := task.New(id, tenant, nil, stages(), now)
		require.NoError(t, err)
		tasks[i], ids[i] = tk, tk.ID()
	}
	p, err := plan.New(plan.Draft{ID: id, Name: "retained", Stages: stages(), TaskIDs: ids, IdempotencyKey: key}, now)
	require.NoError(t, err)
	require.NoError(t, s.Creator.CreatePlan(t.Context(), p, tasks))
	return retained{plan: p, tasks: tasks}
}

// savePlan applies step to the stored plan and saves it.
func (r *retained) savePlan(t *testing.T, s Retention, step func(p *plan.Plan) error) {
	t.Helper()
	p, err := s.Plans.Update(t.Context(), r.plan.ID(), step)
	require.NoError(t, err)
	r.plan = p
}

// runFirstStage runs task i's first stage (a checkpoint saved, a transcript kept) and leaves
// it RUNNING.
func (r *retained) runFirstStage(t *testing.T, s Retention, i int, now time.Time) {
	t.Helper()
	tk, epoch := startRun(t, s.Store, r.tasks[i].ID(), now)
	cp := checkpoint.New(tk.ID())
	completeStage(t, tk, cp, 0, epoch, now)
	require.NoError(t, s.Tasks.Save(t.Context(), tk, cp))
	key := task.AttemptKey{StageIndex: 0, Run: tk.Attempt(), Attempt: 1}
	require.NoError(t, s.Transcripts.KeepTranscript(t.Context(), tk.ID(), key, stage.Transcript{Stdout: "built " + tk.TenantID()}))
	r.tasks[i] = tk
}

// endTask cancels task i.
func (r *retained) endTask(t *testing.T, s Retention, i int) {
	t.Helper()
	endTask(t, s.Store, r.tasks[i])
	tk, err := s.Tasks.Task(t.Context(), r.tasks[i].ID())
	require.NoError(t, err)
	r.tasks[i] = tk
}

// requireKept fails unless the store holds the plan, its tasks (each its tenant's latest),
// their checkpoints and transcripts (for those that ran), and the plan's index.
func (r retained) requireKept(t *testing.T, s Retention, msg string) {
	t.Helper()
	ctx := t.Context()
	_, err := s.Plans.Plan(ctx, r.plan.ID())
	require.NoError(t, err, msg)
	for _, want := range r.tasks {
		got, err := s.Tasks.Task(ctx, want.ID())
		require.NoError(t, err, msg)
		assert.Equal(t, want.Status(), got.Status(), msg)
		latest, err := s.Tasks.Latest(ctx, want.TenantID())
		require.NoError(t, err, msg)
		assert.Equal(t, want.ID(), latest.ID(), msg)
		if want.Fence() == 0 {
			continue // never ran: no checkpoint, no transcript
		}
		_, err = s.Checkpoints.Checkpoint(ctx, want.ID())
		require.NoError(t, err, msg)
		outs, err := s.Transcripts.Transcripts(ctx, want.ID())
		require.NoError(t, err, msg)
		assert.Len(t, outs, 1, msg)
	}
	sum, err := s.Index.Summary(ctx, r.plan.ID())
	require.NoError(t, err, msg)
	assert.Equal(t, len(r.tasks), sum.Total, msg)
}

// Nothing of an active plan goes, whatever its tasks do: an ended task of a plan still
// RUNNING is kept with the rest, long past the retention.
func testRetentionKeepsActivePlans(t *testing.T, s Retention) {
	r := createRetained(t, s, "kept", at(0), "kept-a", "kept-b", "kept-c")
	rec := record(t, s.Store, r.plan.ID(), "", "bob", "submit", at(0))
	r.savePlan(t, s, func(p *plan.Plan) error { return p.Start(at(1)) })
	r.runFirstStage(t, s, 0, at(2))
	r.runFirstStage(t, s, 1, at(2))
	r.endTask(t, s, 1)

	s.Pass(t, s.beyond())
	r.requireKept(t, s, "an active plan past the retention")
	got, err := s.Plans.Plan(t.Context(), r.plan.ID())
	require.NoError(t, err)
	assert.Equal(t, plan.Running, got.Status())
	assert.Equal(t, []string{rec.ID()}, recordIDs(listAll(t, s.Store, audit.Query{PlanID: r.plan.ID()})), "audit records")
}

// Once a plan has stayed ended for the retention, it is forgotten with everything of it: every
// read answers as for what was never stored, and a late write finds nothing.
func testRetentionForgetsEndedPlans(t *testing.T, s Retention) {
	ctx := t.Context()
	r := createRetained(t, s, "forgotten", at(0), "gone-a", "gone-b")
	record(t, s.Store, r.plan.ID(), "", "bob", "submit", at(0))
	r.savePlan(t, s, func(p *plan.Plan) error { return p.Start(at(1)) })
	r.runFirstStage(t, s, 0, at(2))
	r.endTask(t, s, 0)
	r.endTask(t, s, 1)
	r.savePlan(t, s, func(p *plan.Plan) error { return p.Fail(at(3)) })
	r.requireKept(t, s, "an ended plan, at its end")

	s.Pass(t, s.beyond())
	a, b := r.tasks[0], r.tasks[1]
	tests := []struct {
		name string
		read func() error
		want error
	}{
		{"plan", func() error { _, err := s.Plans.Plan(ctx, r.plan.ID()); return err }, plan.ErrNotFound},
		{"idempotency key", func() error { _, err := s.Plans.ByIdempotencyKey(ctx, "forgotten"); return err }, plan.ErrNotFound},
		{"task", func() error { _, err := s.Tasks.Task(ctx, a.ID()); return err }, task.ErrNotFound},
		{"tasks by ids", func() error { _, err := s.Tasks.ByIDs(ctx, []string{a.ID(), b.ID()}); return err }, task.ErrNotFound},
		{"statuses", func() error { _, err := s.Tasks.Statuses(ctx, []string{b.ID()}); return err }, task.ErrNotFound},
		{"tenant's latest", func() error { _, err := s.Tasks.Latest(ctx, a.TenantID()); return err }, task.ErrNotFound},
		{"tenant's latest with checkpoint", func() error { _, _, err := s.Tasks.LatestWithCheckpoint(ctx, b.TenantID()); return err }, task.ErrNotFound},
		{"checkpoint", func() error { _, err := s.Checkpoints.Checkpoint(ctx, a.ID()); return err }, checkpoint.ErrNotFound},
		{"a transcript kept late", func() error {
			return s.Transcripts.KeepTranscript(ctx, a.ID(), task.AttemptKey{StageIndex: 1, Run: 1, Attempt: 1}, stage.Transcript{Stdout: "late"})
		}, task.ErrNotFound},
		{"a plan write", func() error { return s.Plans.Save(ctx, r.plan) }, plan.ErrNotFound},
	}
	for _, tt := range tests {
		require.ErrorIs(t, tt.read(), tt.want, tt.name)
	}
	outs, err := s.Transcripts.Transcripts(ctx, a.ID())
	require.NoError(t, err)
	assert.Empty(t, outs, "transcripts")
	listed, err := s.Plans.List(ctx, plan.Filter{})
	require.NoError(t, err)
	assert.NotContains(t, planIDs(listed), r.plan.ID(), "listing")
	sum, err := s.Index.Summary(ctx, r.plan.ID())
	require.NoError(t, err)
	assert.Zero(t, sum.Total, "summary")
	rows, err := s.Index.Rows(ctx, r.plan.ID())
	require.NoError(t, err)
	assert.Empty(t, rows, "rows")
	assert.Empty(t, listAll(t, s.Store, audit.Query{PlanID: r.plan.ID()}), "audit records")
}

// A tenant whose index another plan's task took over keeps it when the earlier plan is
// forgotten; the other plan, active, is kept whole.
func testRetentionSparesTakenTenants(t *testing.T, s Retention) {
	old := createRetained(t, s, "", at(0), "moved", "stayed")
	old.endTask(t, s, 0)
	old.endTask(t, s, 1)
	old.savePlan(t, s, func(p *plan.Plan) error { return p.Cancel(at(1)) })
	next := createRetained(t, s, "", at(2), "moved")

	s.Pass(t, s.beyond())
	_, err := s.Plans.Plan(t.Context(), old.plan.ID())
	require.ErrorIs(t, err, plan.ErrNotFound)
	_, err = s.Tasks.Task(t.Context(), old.tasks[0].ID())
	require.ErrorIs(t, err, task.ErrNotFound)
	_, err = s.Tasks.Latest(t.Context(), "stayed")
	require.ErrorIs(t, err, task.ErrNotFound)
	next.requireKept(t, s, "the plan that took the tenant over")
}

// An operator's retry makes an ended plan active again: it is kept past the retention, and
// forgotten once it has stayed ended for the retention after its next end.
func testRetentionRetryTakesItBack(t *testing.T, s Retention) {
	r := createRetained(t, s, "", at(0), "again-a", "again-b")
	r.savePlan(t, s, func(p *plan.Plan) error { return p.Start(at(1)) })
	r.runFirstStage(t, s, 0, at(2))
	r.endTask(t, s, 0)
	r.endTask(t, s, 1)
	r.savePlan(t, s, func(p *plan.Plan) error { return p.Cancel(at(3)) })

	// The retry, as the orchestrator makes it: the plan reopened, then the task queued.
	r.savePlan(t, s, func(p *plan.Plan) error { return p.Reopen() })
	tk, err := s.Tasks.Update(t.Context(), r.tasks[0].ID(), func(tk *task.Task) (*checkpoint.Checkpoint, error) {
		return nil, tk.Retry(1, at(4))
	})
	require.NoError(t, err)
	r.tasks[0] = tk
	s.Pass(t, s.beyond())
	r.requireKept(t, s, "a plan active again, past the retention")

	r.endTask(t, s, 0)
	r.savePlan(t, s, func(p *plan.Plan) error { return p.Cancel(at(5)) })
	s.Pass(t, s.beyond())
	for _, tk := range r.tasks {
		_, err := s.Tasks.Task(t.Context(), tk.ID())
		require.ErrorIs(t, err, task.ErrNotFound, fmt.Sprintf("task of tenant %s", tk.TenantID()))
	}
	_, err = s.Plans.Plan(t.Context(), r.plan.ID())
	require.ErrorIs(t, err, plan.ErrNotFound)
}
