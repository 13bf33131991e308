package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/domain/event"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/orchestrator"
	"github.com/executor-dev/executor/stagekind"
)

// recorder keeps what was published.
type recorder struct {
	mu     sync.Mutex
	events []event.Event
}

func (r *recorder) Publish(e event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) of(taskID string) []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []event.Event
	for _, e := range r.events {
		if e.TaskID == taskID {
			out = append(out, e)
		}
	}
	return out
}

func (r *recorder) plan(planID string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if e.Kind == event.Plan && e.PlanID == planID {
			out = append(out, e.Status)
		}
	}
	return out
}

// Every transition is published: the task's start, each stage (the last one completing the
// task), a retried attempt, the plan's start and end; heartbeats are not.
func TestTransitionsArePublished(t *testing.T) {
	t.Parallel()
	db := memrepo.New()
	kinds := stagekind.Builtin(stagekind.HTTPOptions{})
	var calls atomic.Int32
	require.NoError(t, kinds.Register("flaky", stage.HandlerFunc(func(context.Context, stage.Request) (json.RawMessage, error) {
		if calls.Add(1) == 1 {
			return nil, stage.Retryable(errors.New("first try fails"))
		}
		return nil, nil
	})))
	rec := &recorder{}
	svc, _ := apptest.New(t, apptest.Stores{
		Creator: db, Plans: db.Plans(), Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Locker: lock.NewMemory(),
	}, kinds, orchestrator.Config{Workers: 2, Events: rec, Rand: func() float64 { return 0 }})
	specs := []stage.Spec{
		{Name: "one", Kind: "noop", Retry: stage.Policy{MaxAttempts: 1}},
		{Name: "two", Kind: "flaky", Retry: stage.Policy{MaxAttempts: 2}},
		{Name: "three", Kind: "noop", Retry: stage.Policy{MaxAttempts: 1}},
	}
	sub, err := svc.Submit(context.Background(), app.SubmitRequest{Name: "ev", Stages: specs, Tenants: []app.TenantInput{{ID: "ev-1"}}})
	require.NoError(t, err)
	p := sub.Plan.Plan
	v, err := svc.WaitPlan(context.Background(), p.ID(), app.MaxWait)
	require.NoError(t, err)
	require.Equal(t, "COMPLETED", string(v.Plan.Status()))

	got := rec.of(p.TaskIDs()[0])
	type step struct {
		kind   event.Kind
		status string
		stage  int
	}
	var steps []step
	for _, e := range got {
		steps = append(steps, step{e.Kind, e.Status, e.Stage})
		assert.Equal(t, "ev-1", e.TenantID)
		assert.Equal(t, p.ID(), e.PlanID)
		assert.False(t, e.At.IsZero())
	}
	assert.Equal(t, []step{
		{event.Task, "RUNNING", 0},    // started
		{event.Stage, "RUNNING", 0},   // one done
		{event.Task, "RUNNING", 1},    // two failed once, retried
		{event.Stage, "RUNNING", 1},   // two done
		{event.Stage, "COMPLETED", 2}, // three done, the task with it
	}, steps)
	require.NotNil(t, got[2].Last)
	assert.Equal(t, event.Attempt{StageIndex: 1, Stage: "two", Attempt: 1, Outcome: "failed", Class: "retryable"}, *got[2].Last)
	assert.Equal(t, "three", got[4].StageName)
	assert.Equal(t, []string{"RUNNING", "COMPLETED"}, rec.plan(p.ID()))
}
