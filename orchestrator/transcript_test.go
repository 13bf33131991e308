package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/orchestrator"
	"github.com/executor-dev/executor/stagekind"
)

// Every attempt that printed something has its transcript kept under its own ledger entry
// (stage, run, attempt): a retried attempt's and the last one's, a later run's beside an
// earlier run's; an attempt that printed nothing, or whose kind keeps no transcript, has none.
// The task queries return them.
func TestEveryAttemptKeepsWhatItPrinted(t *testing.T) {
	t.Parallel()
	db := memrepo.New()
	kinds := stagekind.Builtin(stagekind.HTTPOptions{})
	svc, _ := apptest.New(t, apptest.Stores{
		Creator: db, Plans: db.Plans(), Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Locker: lock.NewMemory(),
		Transcripts: db.Transcripts(),
	}, kinds, orchestrator.Config{Workers: 2, Rand: func() float64 { return 0.5 }})
	require.NoError(t, kinds.Register("chatty", stage.HandlerFunc(func(_ context.Context, req stage.Request) (json.RawMessage, error) {
		req.KeepTranscript(stage.Transcript{
			Stdout: fmt.Sprintf("%s run %d attempt %d\n", req.Stage, req.Run, req.Attempt),
			Stderr: fmt.Sprintf("%s warning %d\n", req.Stage, req.Attempt),
		})
		switch {
		case req.Stage == "migrate" && req.Attempt == 1:
			return nil, errors.New("migration lock held")
		case req.Stage == "verify" && req.Run == 1:
			return nil, stage.Permanent(errors.New("verification failed"))
		}
		return nil, nil
	})))
	require.NoError(t, kinds.Register("silent", stage.HandlerFunc(func(_ context.Context, req stage.Request) (json.RawMessage, error) {
		req.KeepTranscript(stage.Transcript{}) // printed nothing: nothing to keep
		return nil, nil
	})))
	retry := stage.Policy{MaxAttempts: 2, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond, Multiplier: 1, Jitter: stage.JitterNone}
	sub, err := svc.Submit(context.Background(), app.SubmitRequest{
		Tenants: []app.TenantInput{{ID: "tr-1"}},
		Stages: []stage.Spec{
			{Name: "migrate", Kind: "chatty", Retry: retry},
			{Name: "quiet", Kind: "noop", Retry: retry},
			{Name: "silent", Kind: "silent", Retry: retry},
			{Name: "verify", Kind: "chatty", Retry: retry},
		},
	})
	require.NoError(t, err)
	ctx := context.Background()
	v, err := svc.WaitTenantTask(ctx, "tr-1", 20*time.Second)
	require.NoError(t, err)
	require.Equal(t, task.Failed, v.Task.Status())
	_, err = svc.RetryTenant(ctx, "tr-1", true) // run 2, at verify
	require.NoError(t, err)
	v, err = svc.WaitTenantTask(ctx, "tr-1", 20*time.Second)
	require.NoError(t, err)
	require.Equal(t, task.Completed, v.Task.Status())

	printed := func(name string, run, attempt int) stage.Transcript {
		return stage.Transcript{
			Stdout: fmt.Sprintf("%s run %d attempt %d\n", name, run, attempt), Stderr: fmt.Sprintf("%s warning %d\n", name, attempt),
		}
	}
	want := map[task.AttemptKey]stage.Transcript{
		{StageIndex: 0, Run: 1, Attempt: 1}: printed("migrate", 1, 1), // retried: committed with the retry
		{StageIndex: 0, Run: 1, Attempt: 2}: printed("migrate", 1, 2),
		{StageIndex: 3, Run: 1, Attempt: 1}: printed("verify", 1, 1), // failed the run
		{StageIndex: 3, Run: 2, Attempt: 1}: printed("verify", 2, 1),
	}
	assert.Equal(t, want, v.Transcripts, "the tenant's task")
	byID, err := svc.Task(ctx, v.Task.ID())
	require.NoError(t, err)
	assert.Equal(t, want, byID.Transcripts, "the task by id")
	for _, a := range v.Task.Ledger() {
		_, ok := want[a.Key()]
		assert.Equal(t, a.Stage == "migrate" || a.Stage == "verify", ok, "a transcript for %+v", a.Key())
	}
	page, err := svc.PlanTasks(ctx, sub.Plan.Plan.ID(), app.TaskQuery{})
	require.NoError(t, err)
	require.Len(t, page.Tasks, 1)
	assert.Nil(t, page.Tasks[0].Transcripts, "a listing reads none")
}
