//go:build chaos

package chaos

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
)

// A plan that did not end is reported with its shared queue as Redis holds it: the queued
// ids, the claims and the dispatch hash, so a task nobody claims any more can be told apart
// from one claimed by an executor that never ran it.
func TestRawDispatchShowsTheQueueAndTheClaims(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client()
	ctx := context.Background()
	const plan = "01M86TVXWYTGY2D2XRFPZATREE"
	require.NoError(t, rdb.ZAdd(ctx, "executor:queue:{"+plan+"}", redis.Z{Member: "task-2", Score: 2}).Err())
	require.NoError(t, rdb.HSet(ctx, "executor:inflight:{"+plan+"}", "task-1", "exec-a|1795525834700").Err())
	require.NoError(t, rdb.HSet(ctx, "executor:dispatch:{"+plan+"}", "limit", "3").Err())
	got := rawDispatch(ctx, rdb, plan)
	assert.Contains(t, got, "queued [task-2@2]")
	assert.Contains(t, got, "task-1:exec-a|1795525834700")
	assert.Contains(t, got, "limit:3")
}
