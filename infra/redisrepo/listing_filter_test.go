package redisrepo_test

import (
	"context"
	"fmt"
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

// A listing by status or labels narrows each page by the fields of the plans' hashes first:
// an entry whose hash is missing is not narrowed away, but dropped when old and kept when
// young, as an unfiltered listing does.
func TestFilteredListingDropsOnlyOldEntriesWithoutAPlan(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	raw := srv.Client()
	filters := []struct {
		name   string
		filter plan.Filter
	}{
		{"labels", plan.Filter{Labels: map[string]string{"team": "sre"}}},
		{"status", plan.Filter{Status: plan.Running}},
		{"labels, status and a scan bound", plan.Filter{Labels: map[string]string{"team": "sre"}, Status: plan.Running, Scan: 10}},
	}
	for i, tt := range filters {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			keys := rediskey.New(fmt.Sprintf("lf%d:", i))
			s := redisrepo.New(raw, redisrepo.Options{Keys: keys})
			ctx := context.Background()
			young, old := ulid.Make().String(), ulid.Make().String()
			require.NoError(t, raw.ZAdd(ctx, keys.Plans(),
				redis.Z{Score: float64(time.Now().UnixMilli()), Member: young},
				redis.Z{Score: float64(time.Now().Add(-time.Hour).UnixMilli()), Member: old}).Err())

			listed, err := s.Plans().List(ctx, tt.filter)
			require.NoError(t, err)
			assert.Empty(t, listed, "neither has a plan to show")
			left, err := raw.ZRange(ctx, keys.Plans(), 0, -1).Result()
			require.NoError(t, err)
			assert.Equal(t, []string{young}, left, "the old entry is dropped, the young one kept")
		})
	}
}
