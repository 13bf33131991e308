package app_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/orchestrator"
)

func TestIdempotencyKeyReplaysOnlyTheSamePlan(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	ctx := context.Background()
	first := sleepPlan("idm-1")
	first.IdempotencyKey = "release-43"
	sub, err := svc.Submit(ctx, first)
	require.NoError(t, err)
	require.False(t, sub.Replayed)

	same := sleepPlan("idm-1")
	same.IdempotencyKey = "release-43"
	same.MaxConcurrency = plan.DefaultMaxConcurrency // a default spelled out is the same plan
	same.Stages[0].Retry.MaxAttempts = stage.DefaultMaxAttempts
	again, err := svc.Submit(ctx, same)
	require.NoError(t, err)
	assert.True(t, again.Replayed)
	assert.Equal(t, sub.Plan.Plan.ID(), again.Plan.Plan.ID())

	tests := []struct {
		name   string
		mutate func(*app.SubmitRequest)
	}{
		{"another param", func(r *app.SubmitRequest) { r.Stages[0].Params["duration"] = "20s" }},
		{"another tenant", func(r *app.SubmitRequest) { r.Tenants[0].ID = "idm-2" }},
		{"another name", func(r *app.SubmitRequest) { r.Name = "other" }},
		{"an invalid plan", func(r *app.SubmitRequest) { r.Stages[0].Kind = "teleport" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := sleepPlan("idm-1")
			req.IdempotencyKey = "release-43"
			tt.mutate(&req)
			got, err := svc.Submit(ctx, req)
			require.ErrorIs(t, err, app.ErrIdempotencyMismatch)
			assert.Nil(t, got)
			var me *app.IdempotencyMismatchError
			require.ErrorAs(t, err, &me)
			assert.Equal(t, "release-43", me.Key)
			assert.Equal(t, sub.Plan.Plan.ID(), me.PlanID)
		})
	}
	assert.Equal(t, 1, countPlans(t, svc), "nothing was created")
}

// A plan stored before request hashes existed has none: a repeated key replays it whatever
// the body, as it did then.
func TestIdempotencyKeyOfAPlanWithoutAHashReplays(t *testing.T) {
	t.Parallel()
	db := memrepo.New()
	svc, _ := apptest.New(t, apptest.Stores{
		Creator: db, Plans: db.Plans(), Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Locker: lock.NewMemory(),
	}, nil, orchestrator.Config{})
	ctx := context.Background()
	now := time.Now()
	stages := []stage.Spec{{Name: "a", Kind: "noop", Retry: stage.Policy{MaxAttempts: 1}}}
	tk, err := task.New(ulid.Make().String(), "old-1", nil, stages, now)
	require.NoError(t, err)
	old, err := plan.New(plan.Draft{
		ID: tk.PlanID(), Stages: stages, TaskIDs: []string{tk.ID()}, IdempotencyKey: "old-key",
	}, now)
	require.NoError(t, err)
	require.NoError(t, db.CreatePlan(ctx, old, []*task.Task{tk}))

	req := sleepPlan("old-2")
	req.IdempotencyKey = "old-key"
	sub, err := svc.Submit(ctx, req)
	require.NoError(t, err)
	assert.True(t, sub.Replayed)
	assert.Equal(t, old.ID(), sub.Plan.Plan.ID())
}

func TestSubmitReportsEveryViolation(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	req := app.SubmitRequest{
		Violations: []app.FieldViolation{
			{Field: "colour", Reason: "unknown field"},
			{Field: "stages[1].kind", Reason: "must be a string"}, // dropped while decoding: not reported again
		},
		StartRate: -1,
		Canary:    plan.Canary{Tenants: 5, Then: plan.ThenAuto},
		Stages: []stage.Spec{
			{Name: "a", Kind: "noop", Params: map[string]any{"x": "{{.Params.nope}}", "y": "{{.TenantID"}},
			{Name: "b", Params: map[string]any{"z": `{{index .Outputs "later" "k"}}`}},
			{Name: "c", Kind: "shell"},
		},
		Tenants: []app.TenantInput{{ID: "ev-1"}, {ID: "bad id"}, {ID: "ev-3"}},
	}
	_, err := svc.Submit(context.Background(), req)
	require.ErrorIs(t, err, app.ErrInvalidInput)
	var ve *app.ValidationError
	require.ErrorAs(t, err, &ve)
	var fields []string
	for _, v := range ve.Violations {
		fields = append(fields, v.Field)
	}
	assert.Equal(t, []string{
		"colour",
		"stages[1].kind",
		"startRate",
		"canary.tenants",
		"stages[2].kind",
		"tenants[1].id",
		"stages[0].params.x", "stages[0].params.y", "stages[1].params.z", // tenant ev-1
		"stages[0].params.x", "stages[0].params.y", "stages[1].params.z", // tenant ev-3
	}, fields)
	assert.Contains(t, ve.Violations[9].Reason, `"ev-3" (tenants[2])`, "a template's violation names its tenant")
	assert.Zero(t, ve.Omitted)
	assert.Equal(t, 0, countPlans(t, svc), "nothing was created")
}

func TestSubmitListsAtMostMaxViolations(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	req := app.SubmitRequest{Stages: []stage.Spec{{Name: "a", Kind: "noop", Params: map[string]any{"v": "{{.Params.version}}"}}}}
	const n = app.MaxViolations + 50
	for i := range n {
		req.Tenants = append(req.Tenants, app.TenantInput{ID: fmt.Sprintf("cap-%03d", i)})
	}
	_, err := svc.Submit(context.Background(), req)
	var ve *app.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Len(t, ve.Violations, app.MaxViolations)
	assert.Equal(t, 50, ve.Omitted, "the others are counted")
}

func TestUnknownStageKindListsTheKinds(t *testing.T) {
	t.Parallel()
	svc := newService(t) // the built-in kinds
	req := sleepPlan("kind-1")
	req.Stages[0].Kind = "shell"
	_, err := svc.Submit(context.Background(), req)
	var ve *app.ValidationError
	require.ErrorAs(t, err, &ve)
	require.Len(t, ve.Violations, 1)
	assert.Equal(t, "stages[0].kind", ve.Violations[0].Field)
	assert.Equal(t, `unknown stage kind "shell": no live executor runs it; want one of approval, exec, http, noop, prometheus, sleep`, ve.Violations[0].Reason)
}
