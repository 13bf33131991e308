package redisrepo_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/redistest"
)

// A tenant's latest task and its checkpoint, read together, are what Latest and Checkpoint
// read one after the other: from Redis, and from memory while Redis is away.
func TestLatestWithCheckpointReadsWhatLatestAndCheckpointRead(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	store, mon := startStore(t, fastClient(t, srv.Addr()), nil)
	ctx := context.Background()
	p, tasks := newPlan(t, "lwc-ran", "lwc-fresh")
	require.NoError(t, store.CreatePlan(ctx, p, tasks))
	runStage(t, store, tasks[0].ID())

	_, _, err := store.Tasks().LatestWithCheckpoint(ctx, "lwc-nobody")
	require.ErrorIs(t, err, task.ErrNotFound)

	check := func(s *redisrepo.Store, step string) {
		t.Helper()
		got, cp, err := s.Tasks().LatestWithCheckpoint(ctx, "lwc-ran")
		require.NoError(t, err, step)
		want, err := s.Tasks().Latest(ctx, "lwc-ran")
		require.NoError(t, err, step)
		require.Equal(t, want.State(), got.State(), step)
		wantCP, err := s.Checkpoints().Checkpoint(ctx, got.ID())
		require.NoError(t, err, step)
		require.NotNil(t, cp, step)
		require.Equal(t, wantCP.State(), cp.State(), step)
		require.Equal(t, 1, cp.Next(), step)

		fresh, cp, err := s.Tasks().LatestWithCheckpoint(ctx, "lwc-fresh")
		require.NoError(t, err, step)
		require.Equal(t, tasks[1].ID(), fresh.ID(), step)
		require.Nil(t, cp, "%s: a task that ran no stage has no checkpoint", step)
	}
	check(store, "on Redis")
	check(redisrepo.New(srv.Client(), redisrepo.Options{}), "another executor, empty memory")

	srv.Kill()
	_, _ = store.Tasks().Task(ctx, tasks[0].ID()) // finds Redis away: degraded from here
	down, _ := mon.Degraded()
	require.True(t, down)
	check(store, "degraded, from memory")
}

// A tenant query takes one round trip when the executor's mirror knows the tenant's latest
// task (it created, ran or read it): the index and the task's keys go in one pipeline and the
// index confirms the guess. When the index names another task (another executor gave the
// tenant a newer one), the query reads that one, in a second round trip, and the next query
// takes one again. An executor that never saw the tenant takes two.
func TestTenantQueryGuessesTheLatestTaskAndTheIndexDecides(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client, trips := srv.CountingClient()
	mine := redisrepo.New(client, redisrepo.Options{})
	other := redisrepo.New(srv.Client(), redisrepo.Options{})
	ctx := context.Background()
	query := func(s *redisrepo.Store, tenant string) (*task.Task, int64) {
		t.Helper()
		before := trips.Count()
		got, _, _, err := s.Transcripts().LatestWithTranscripts(ctx, tenant)
		require.NoError(t, err)
		return got, trips.Count() - before
	}

	old, oldTasks := newPlan(t, "guess-a")
	require.NoError(t, mine.CreatePlan(ctx, old, oldTasks))
	got, n := query(mine, "guess-a")
	require.Equal(t, oldTasks[0].ID(), got.ID())
	require.EqualValues(t, 1, n, "the creator knows the tenant's task")

	for range specs3 {
		runStage(t, other, oldTasks[0].ID())
	}
	newer, newTasks := newPlan(t, "guess-a", "guess-b")
	require.NoError(t, other.CreatePlan(ctx, newer, newTasks))
	_, n = query(mine, "guess-b") // a tenant never seen, of a plan never seen: its stages read too
	require.EqualValues(t, 3, n, "the index, the task, the plan's stages")
	got, n = query(mine, "guess-a")
	require.Equal(t, newTasks[0].ID(), got.ID(), "the index, not the guess, names the task")
	require.EqualValues(t, 2, n, "a wrong guess costs the second round trip")
	got, n = query(mine, "guess-a")
	require.Equal(t, newTasks[0].ID(), got.ID())
	require.EqualValues(t, 1, n, "the read taught the mirror the newer task")

	_, _, _, err := mine.Transcripts().LatestWithTranscripts(ctx, "guess-nobody")
	require.ErrorIs(t, err, task.ErrNotFound)

	stranger := redisrepo.New(client, redisrepo.Options{})
	_, _ = query(stranger, "guess-b") // the plan's stages, read once
	got, n = query(stranger, "guess-a")
	require.Equal(t, newTasks[0].ID(), got.ID())
	require.EqualValues(t, 2, n, "an executor that never saw the tenant reads its index first")
}
