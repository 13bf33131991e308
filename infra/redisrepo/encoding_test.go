package redisrepo_test

import (
	"context"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/infra/repotest"
)

// A task that ran ten noop stages (ten succeeded attempts, ten null outputs) stays in Redis's
// compact listpack hash encoding, and its hash and checkpoint together take well under the
// 4.5 KB they took with the ledger as one JSON field (issue 5).
func TestFinishedTaskIsCompactInRedis(t *testing.T) {
	t.Parallel()
	const stages = 10
	srv := redistest.Start(t)
	ctx := context.Background()
	store := redisrepo.New(srv.Client(), redisrepo.Options{})
	specs := repotest.NoopStages(stages)
	now := time.Now().UTC().Truncate(time.Microsecond) // the ledger keeps µs
	tk, err := task.New(ulid.Make().String(), "t0000001", nil, specs, now)
	require.NoError(t, err)
	p, err := plan.New(plan.Draft{ID: tk.PlanID(), Name: "compact", Stages: specs, TaskIDs: []string{tk.ID()}}, now)
	require.NoError(t, err)
	require.NoError(t, store.Plans().Create(ctx, p))
	require.NoError(t, store.Tasks().Create(ctx, []*task.Task{tk}))

	epochTask, err := store.Tasks().BumpFence(ctx, tk.ID())
	require.NoError(t, err)
	epoch := epochTask.Fence()
	run, err := store.Tasks().Task(ctx, tk.ID())
	require.NoError(t, err)
	require.NoError(t, run.Start(epoch, now))
	require.NoError(t, store.Tasks().Save(ctx, run, nil))
	cp := checkpoint.New(tk.ID())
	for i := range specs {
		require.NoError(t, repotest.CompleteStage(run, cp, i, now.Add(time.Duration(i+1)*time.Millisecond)))
		require.NoError(t, store.Tasks().Save(ctx, run, cp))
	}
	require.NoError(t, run.Complete(now.Add(time.Second)))
	require.NoError(t, store.Tasks().Save(ctx, run, nil))

	// What was written reads back as it was.
	fresh := redisrepo.New(srv.Client(), redisrepo.Options{}) // an empty mirror: reads come from Redis
	got, err := fresh.Tasks().Task(ctx, tk.ID())
	require.NoError(t, err)
	require.Equal(t, run.State(), got.State())
	gotCP, err := fresh.Checkpoints().Checkpoint(ctx, tk.ID())
	require.NoError(t, err)
	require.Equal(t, cp.State(), gotCP.State())

	c := srv.Client()
	keys := rediskey.New("")
	enc, err := c.ObjectEncoding(ctx, keys.Task(tk.ID())).Result()
	require.NoError(t, err)
	require.Equal(t, "listpack", enc, "the task hash's encoding")
	taskBytes, err := c.MemoryUsage(ctx, keys.Task(tk.ID()), 0).Result()
	require.NoError(t, err)
	cpBytes, err := c.MemoryUsage(ctx, keys.Checkpoint(tk.ID()), 0).Result()
	require.NoError(t, err)
	t.Logf("MEMORY USAGE: task hash %d bytes (%s), checkpoint %d bytes, total %d", taskBytes, enc, cpBytes, taskBytes+cpBytes)
	require.Less(t, taskBytes+cpBytes, int64(1400), "bytes of the task hash and its checkpoint")
}
