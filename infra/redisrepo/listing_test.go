package redisrepo_test

import (
	"context"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/redistest"
)

// A listing entry whose plan hash is missing is dropped only when it is old (the plan
// expired): a young one may be a plan being created, whose entry a Redis Cluster may write
// before its hash (two masters, one pipeline), and stays listed once the hash is there.
func TestListingDropsOnlyOldEntriesWithoutAPlan(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	raw := srv.Client()
	s := redisrepo.New(raw, redisrepo.Options{})
	ctx := context.Background()
	keys := rediskey.New("")
	young, old := ulid.Make().String(), ulid.Make().String()
	require.NoError(t, raw.ZAdd(ctx, keys.Plans(),
		redis.Z{Score: float64(time.Now().UnixMilli()), Member: young},
		redis.Z{Score: float64(time.Now().Add(-time.Hour).UnixMilli()), Member: old}).Err())

	listed, err := s.Plans().List(ctx, plan.Filter{})
	require.NoError(t, err)
	assert.Empty(t, listed, "neither has a plan to show")
	left, err := raw.ZRange(ctx, keys.Plans(), 0, -1).Result()
	require.NoError(t, err)
	assert.Equal(t, []string{young}, left, "the old entry is dropped, the young one kept")
}
