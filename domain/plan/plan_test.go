package plan_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
)

var t0 = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

func draft() plan.Draft {
	return plan.Draft{
		ID:     ulid.Make().String(),
		Name:   "rollout",
		Labels: map[string]string{"team": "core"},
		Stages: []stage.Spec{
			{Name: "drain", Kind: "http"},
			{Name: "deploy", Kind: "http"},
		},
		TaskIDs:        []string{ulid.Make().String(), ulid.Make().String()},
		FailureBudget:  1,
		IdempotencyKey: "key-1",
	}
}

func newPlan(t *testing.T, d plan.Draft) *plan.Plan {
	t.Helper()
	p, err := plan.New(d, t0)
	require.NoError(t, err)
	return p
}

// inStatus drives a new plan through legal transitions until it is in status s.
func inStatus(t *testing.T, s plan.Status) *plan.Plan {
	t.Helper()
	d := draft()
	if s == plan.Scheduled {
		d.StartAt = t0.Add(time.Hour)
	}
	p := newPlan(t, d)
	now := t0
	step := func(err error) {
		t.Helper()
		now = now.Add(time.Second)
		require.NoError(t, err)
	}
	switch s {
	case plan.Scheduled, plan.Pending:
	case plan.Running:
		step(p.Start(now))
	case plan.Paused:
		step(p.Start(now))
		step(p.Pause(now))
	case plan.Completed:
		step(p.Start(now))
		step(p.Complete(now))
	case plan.Failed:
		step(p.Start(now))
		step(p.Fail(now))
	case plan.Cancelled:
		step(p.Cancel(now))
	default:
		t.Fatalf("no fixture for status %q", s)
	}
	require.Equal(t, s, p.Status())
	return p
}

type action struct {
	name string
	do   func(p *plan.Plan, now time.Time) error
}

var actions = []action{
	{"Release", func(p *plan.Plan, _ time.Time) error { return p.Release() }},
	{"Start", func(p *plan.Plan, now time.Time) error { return p.Start(now) }},
	{"Pause", func(p *plan.Plan, _ time.Time) error { return p.Pause(t0) }},
	{"PauseFor", func(p *plan.Plan, _ time.Time) error { return p.PauseFor("executor lost", t0) }},
	{"Resume", func(p *plan.Plan, _ time.Time) error { return p.Resume() }},
	{"Complete", func(p *plan.Plan, now time.Time) error { return p.Complete(now) }},
	{"Fail", func(p *plan.Plan, now time.Time) error { return p.Fail(now) }},
	{"Cancel", func(p *plan.Plan, now time.Time) error { return p.Cancel(now) }},
	{"Reopen", func(p *plan.Plan, _ time.Time) error { return p.Reopen() }},
}

// matrix is the doc.go state machine: every (status, action) pair not listed is invalid.
var matrix = map[plan.Status]map[string]plan.Status{
	plan.Scheduled: {"Release": plan.Pending, "Cancel": plan.Cancelled},
	plan.Pending:   {"Start": plan.Running, "Cancel": plan.Cancelled},
	plan.Running: {
		"Pause": plan.Paused, "PauseFor": plan.Paused, "Complete": plan.Completed, "Fail": plan.Failed,
		"Cancel": plan.Cancelled,
	},
	plan.Paused: {
		"Resume": plan.Running, "Complete": plan.Completed, "Fail": plan.Failed, "Cancel": plan.Cancelled,
	},
	plan.Completed: {"Reopen": plan.Running},
	plan.Failed:    {"Reopen": plan.Running},
	plan.Cancelled: {"Reopen": plan.Running},
}

func TestTransitionMatrix(t *testing.T) {
	t.Parallel()
	require.Len(t, matrix, len(plan.Statuses), "the matrix must list every status")
	for _, from := range plan.Statuses {
		row, ok := matrix[from]
		require.True(t, ok, "matrix has no row for %s", from)
		for _, a := range actions {
			want, legal := row[a.name]
			t.Run(string(from)+"/"+a.name, func(t *testing.T) {
				t.Parallel()
				p := inStatus(t, from)
				before := p.State()
				now := t0.Add(time.Hour)

				var err error
				require.NotPanics(t, func() { err = a.do(p, now) })

				if !legal {
					require.ErrorIs(t, err, plan.ErrInvalidTransition)
					var te *plan.TransitionError
					require.ErrorAs(t, err, &te)
					assert.Equal(t, from, te.From)
					assert.NotEmpty(t, te.Action)
					assert.Equal(t, before, p.State(), "a refused action must not change the plan")
					return
				}
				require.NoError(t, err)
				assert.Equal(t, want, p.Status())
				assert.Equal(t, want.Terminal(), !p.FinishedAt().IsZero(),
					"FinishedAt is set exactly when the plan is terminal")
				if want.Terminal() {
					assert.Equal(t, now, p.FinishedAt())
				}
				_, err = plan.Load(p.State())
				require.NoError(t, err, "a legal transition must leave a loadable plan")
			})
		}
	}
}

func TestTransitionError(t *testing.T) {
	t.Parallel()
	p := inStatus(t, plan.Running)
	err := fmt.Errorf("wrapped: %w", p.Reopen())
	require.ErrorIs(t, err, plan.ErrInvalidTransition)
	var te *plan.TransitionError
	require.True(t, errors.As(err, &te))
	assert.Equal(t, plan.Running, te.From)
	assert.Equal(t, "reopen", te.Action)
}

func TestStatusTerminal(t *testing.T) {
	t.Parallel()
	want := map[plan.Status]bool{
		plan.Scheduled: false, plan.Pending: false, plan.Running: false, plan.Paused: false,
		plan.Completed: true, plan.Failed: true, plan.Cancelled: true,
	}
	require.Len(t, plan.Statuses, len(want))
	for _, s := range plan.Statuses {
		t.Run(string(s), func(t *testing.T) {
			t.Parallel()
			assert.True(t, s.Valid())
			assert.Equal(t, want[s], s.Terminal())
		})
	}
	assert.False(t, plan.Status("DONE").Valid())
}

func TestStartSetsStartedAt(t *testing.T) {
	t.Parallel()
	p := inStatus(t, plan.Pending)
	assert.True(t, p.StartedAt().IsZero())
	start := t0.Add(time.Minute).In(time.FixedZone("X", 3600))
	require.NoError(t, p.Start(start))
	assert.Equal(t, t0.Add(time.Minute), p.StartedAt(), "stored in UTC")
}

func TestReopenClearsFinishedAt(t *testing.T) {
	t.Parallel()
	for _, from := range []plan.Status{plan.Failed, plan.Cancelled} {
		t.Run(string(from), func(t *testing.T) {
			t.Parallel()
			p := inStatus(t, from)
			require.False(t, p.FinishedAt().IsZero())
			require.NoError(t, p.Reopen())
			assert.Equal(t, plan.Running, p.Status())
			assert.True(t, p.FinishedAt().IsZero())
			require.NoError(t, p.Complete(t0.Add(time.Hour)))
			assert.Equal(t, t0.Add(time.Hour), p.FinishedAt())
		})
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	t.Run("defaults and accessors", func(t *testing.T) {
		t.Parallel()
		d := draft()
		p := newPlan(t, d)
		assert.Equal(t, d.ID, p.ID())
		assert.Equal(t, d.Name, p.Name())
		assert.Equal(t, d.Labels, p.Labels())
		assert.Equal(t, d.Stages, p.Stages())
		assert.Equal(t, d.TaskIDs, p.TaskIDs())
		assert.Equal(t, plan.DefaultMaxConcurrency, p.MaxConcurrency())
		assert.Equal(t, 5, p.MaxConcurrency())
		assert.Equal(t, 1, p.FailureBudget())
		assert.Equal(t, "key-1", p.IdempotencyKey())
		assert.Equal(t, plan.Pending, p.Status())
		assert.Equal(t, t0, p.CreatedAt())
		assert.True(t, p.StartedAt().IsZero())
		assert.True(t, p.FinishedAt().IsZero())
		assert.True(t, p.StartAt().IsZero())
	})

	tests := []struct {
		name       string
		startAt    time.Time
		wantStatus plan.Status
	}{
		{"no start time", time.Time{}, plan.Pending},
		{"start time in the past", t0.Add(-time.Hour), plan.Pending},
		{"start time now", t0, plan.Pending},
		{"start time in the future", t0.Add(time.Nanosecond), plan.Scheduled},
		{"start time far ahead", t0.Add(24 * time.Hour), plan.Scheduled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := draft()
			d.StartAt = tt.startAt
			p := newPlan(t, d)
			assert.Equal(t, tt.wantStatus, p.Status())
			assert.True(t, tt.startAt.Equal(p.StartAt()))
		})
	}
}

func TestNewValidation(t *testing.T) {
	t.Parallel()
	dupTask := ulid.Make().String()
	tests := []struct {
		name      string
		mutate    func(d *plan.Draft)
		wantField string // empty: valid
		wantMaxC  int
	}{
		{"max concurrency 0 takes the default", func(d *plan.Draft) { d.MaxConcurrency = 0 }, "", 5},
		{"max concurrency 1", func(d *plan.Draft) { d.MaxConcurrency = 1 }, "", 1},
		{"max concurrency 1000", func(d *plan.Draft) { d.MaxConcurrency = 1000 }, "", 1000},
		{"max concurrency 1001", func(d *plan.Draft) { d.MaxConcurrency = 1001 }, "maxConcurrency", 0},
		{"negative max concurrency", func(d *plan.Draft) { d.MaxConcurrency = -1 }, "maxConcurrency", 0},
		{"no failure budget", func(d *plan.Draft) { d.FailureBudget = 0 }, "", 5},
		{"negative failure budget", func(d *plan.Draft) { d.FailureBudget = -1 }, "failureBudget", 0},
		{"no stages", func(d *plan.Draft) { d.Stages = nil }, "stages", 0},
		{"duplicate stage names", func(d *plan.Draft) {
			d.Stages = append(d.Stages, stage.Spec{Name: "drain", Kind: "http"})
		}, "stages[2].name", 0},
		{"no tasks", func(d *plan.Draft) { d.TaskIDs = nil }, "tenants", 0},
		{"duplicate task ids", func(d *plan.Draft) { d.TaskIDs = []string{dupTask, ulid.Make().String(), dupTask} }, "taskIds", 0},
		{"non-ULID id", func(d *plan.Draft) { d.ID = "plan-1" }, "planId", 0},
		{"empty id", func(d *plan.Draft) { d.ID = "" }, "planId", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := draft()
			tt.mutate(&d)
			p, err := plan.New(d, t0)
			if tt.wantField == "" {
				require.NoError(t, err)
				assert.Equal(t, tt.wantMaxC, p.MaxConcurrency())
				return
			}
			require.ErrorIs(t, err, plan.ErrInvalid)
			assert.Nil(t, p)
			var fe *stage.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.wantField, fe.Field)
			assert.NotEmpty(t, fe.Reason)
		})
	}
}

func TestStateRoundTrip(t *testing.T) {
	t.Parallel()
	for _, s := range plan.Statuses {
		t.Run(string(s), func(t *testing.T) {
			t.Parallel()
			p := inStatus(t, s)
			st := p.State()
			loaded, err := plan.Load(st)
			require.NoError(t, err)
			assert.Equal(t, st, loaded.State())
		})
	}
}

func TestLoadRefusesBrokenState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(s *plan.State)
	}{
		{"unknown status", func(s *plan.State) { s.Status = "DONE" }},
		{"empty status", func(s *plan.State) { s.Status = "" }},
		{"terminal without finishedAt", func(s *plan.State) { s.FinishedAt = time.Time{} }},
		{"bad id", func(s *plan.State) { s.ID = "nope" }},
		{"max concurrency 0 (no default on load)", func(s *plan.State) { s.MaxConcurrency = 0 }},
		{"max concurrency 1001", func(s *plan.State) { s.MaxConcurrency = 1001 }},
		{"negative failure budget", func(s *plan.State) { s.FailureBudget = -3 }},
		{"no stages", func(s *plan.State) { s.Stages = nil }},
		{"duplicate stage names", func(s *plan.State) {
			s.Stages = []stage.Spec{{Name: "x", Kind: "k"}, {Name: "x", Kind: "k"}}
		}},
		{"no tasks", func(s *plan.State) { s.TaskIDs = []string{} }},
		{"duplicate task ids", func(s *plan.State) { s.TaskIDs = []string{s.TaskIDs[0], s.TaskIDs[0]} }},
	}
	base := inStatus(t, plan.Completed).State()
	_, err := plan.Load(base)
	require.NoError(t, err, "the base state must be valid")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := base
			s.TaskIDs = append([]string(nil), base.TaskIDs...)
			tt.mutate(&s)
			p, err := plan.Load(s)
			require.ErrorIs(t, err, plan.ErrInvalid)
			assert.Nil(t, p)
		})
	}
}

func TestCloneIsIndependent(t *testing.T) {
	t.Parallel()
	p := inStatus(t, plan.Running)
	c := p.Clone()
	require.NoError(t, c.Complete(time.Now()))
	require.Equal(t, plan.Running, p.Status(), "a transition of the clone changed the original")
	require.True(t, p.FinishedAt().IsZero())
	require.Equal(t, plan.Completed, c.Status())
	require.Equal(t, p.TaskIDs(), c.TaskIDs())
	require.Equal(t, p.ID(), c.ID())
}

func TestPauseForKeepsItsReasonUntilResume(t *testing.T) {
	t.Parallel()
	p := inStatus(t, plan.Running)
	require.NoError(t, p.PauseFor("executor exec-a lost; interrupted: t-1", t0))
	assert.Equal(t, "executor exec-a lost; interrupted: t-1", p.Reason())
	loaded, err := plan.Load(p.State())
	require.NoError(t, err)
	assert.Equal(t, p.Reason(), loaded.Reason(), "the reason is persisted state")
	require.NoError(t, p.PauseFor("executor exec-a lost; interrupted: t-1, t-2", t0), "more was lost meanwhile")
	assert.Equal(t, "executor exec-a lost; interrupted: t-1, t-2", p.Reason())
	require.NoError(t, p.Resume())
	assert.Empty(t, p.Reason(), "resume clears the reason")
	require.NoError(t, p.Pause(t0))
	assert.Empty(t, p.Reason(), "an operator's pause has no reason")
	require.ErrorIs(t, p.PauseFor("executor lost", t0), plan.ErrInvalidTransition, "an operator's pause stands")
}

// A plan that ends while paused for a lost executor no longer asks an SRE to resume it.
func TestAnEndedPlanHasNoPauseReason(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		end  func(*plan.Plan, time.Time) error
	}{
		{"cancelled", (*plan.Plan).Cancel},
		{"failed", (*plan.Plan).Fail},
		{"completed", (*plan.Plan).Complete},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := inStatus(t, plan.Running)
			require.NoError(t, p.PauseFor("executor exec-a lost; interrupted: t-1", t0))
			require.NoError(t, tt.end(p, time.Now()))
			assert.Empty(t, p.Reason())
		})
	}
}
