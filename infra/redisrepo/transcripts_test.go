package redisrepo_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/redistest"
)

// A task's transcripts are one hash of compact JSON in the task's slot, with the task's TTL:
// none while its plan is active, the retention once it ended (a late one written after the
// end too), none again when the plan is active again.
func TestTranscriptsLiveAsLongAsTheirTask(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := srv.Client()
	const retention = time.Hour
	store := redisrepo.New(client, redisrepo.Options{TTL: retention})
	ctx := context.Background()
	p, tasks := newPlan(t, "out-1")
	require.NoError(t, store.CreatePlan(ctx, p, tasks))
	id := tasks[0].ID()
	key := rediskey.New("").Transcripts(id)
	keep := func(attempt int) {
		t.Helper()
		require.NoError(t, store.Transcripts().KeepTranscript(ctx, id, task.AttemptKey{StageIndex: 0, Run: 1, Attempt: attempt},
			stage.Transcript{Stdout: "<migrated> 3 tables\n", Stderr: "warning: slow\n"}))
	}
	requireTTL := func(want time.Duration, step string) {
		t.Helper()
		got, err := client.TTL(ctx, key).Result()
		require.NoError(t, err, step)
		if want < 0 {
			require.Equal(t, time.Duration(-1), got, "%s: no TTL", step)
			return
		}
		require.InDelta(t, want.Seconds(), got.Seconds(), 60, step)
	}

	keep(1)
	requireTTL(-1, "while the plan is active")
	assert.Equal(t, `{"stdout":"<migrated> 3 tables\n","stderr":"warning: slow\n"}`, client.HGet(ctx, key, "0:1:1").Val())

	_, err := store.Plans().Update(ctx, p.ID(), func(p *plan.Plan) error {
		if err := p.Start(time.Now()); err != nil {
			return err
		}
		return p.Fail(time.Now())
	})
	require.NoError(t, err)
	requireTTL(retention, "once the plan ended")
	keep(2)
	requireTTL(retention, "a transcript written after the end: the task's TTL")

	_, err = store.Plans().Update(ctx, p.ID(), func(p *plan.Plan) error { return p.Reopen() })
	require.NoError(t, err)
	requireTTL(-1, "a plan active again")
}

// While Redis is away, a transcript is dropped (an error for the run to log), not journaled,
// and a read finds none: diagnostics never wait for Redis.
func TestTranscriptsAreDroppedWhileRedisIsAway(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	store, mon := startStore(t, fastClient(t, srv.Addr()), nil)
	ctx := context.Background()
	p, tasks := newPlan(t, "out-2")
	require.NoError(t, store.CreatePlan(ctx, p, tasks))
	id := tasks[0].ID()
	k := task.AttemptKey{StageIndex: 0, Run: 1, Attempt: 1}
	require.NoError(t, store.Transcripts().KeepTranscript(ctx, id, k, stage.Transcript{Stdout: "kept"}))

	srv.Kill()
	require.Error(t, store.Transcripts().KeepTranscript(ctx, id, k, stage.Transcript{Stdout: "lost"}), "the write finds Redis away")
	down, _ := mon.Degraded()
	require.True(t, down, "and tells the monitor")
	start := time.Now()
	err := store.Transcripts().KeepTranscript(ctx, id, k, stage.Transcript{Stdout: "dropped"})
	require.ErrorContains(t, err, "redis is away")
	assert.Less(t, time.Since(start), 100*time.Millisecond, "degraded: nothing sent")
	assert.Zero(t, store.JournalLen(), "nothing journaled")
	got, err := store.Transcripts().Transcripts(ctx, id)
	require.NoError(t, err)
	assert.Empty(t, got, "none while degraded")
}
