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
