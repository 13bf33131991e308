package redistest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
)

func TestClusterSpreadsSlotsAndFailsOver(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3, 1)
	require.Len(t, c.Masters(), 3)
	cl := c.Client()
	ctx := context.Background()
	for i := range 30 {
		require.NoError(t, cl.Set(ctx, fmt.Sprintf("k%d", i), "v", 0).Err())
	}
	seen := map[string]bool{}
	for i := range 30 {
		seen[c.MasterOf(fmt.Sprintf("k%d", i)).Addr()] = true
	}
	assert.Len(t, seen, 3, "keys land on every master")

	old := c.MasterOf("k0")
	promoted := c.Failover(old)
	assert.NotEqual(t, old.Addr(), promoted.Addr())
	assert.Equal(t, promoted.Addr(), c.MasterOf("k0").Addr(), "the replica took the slot")
	got, err := cl.Get(ctx, "k0").Result()
	require.NoError(t, err, "the client follows the new master")
	assert.Equal(t, "v", got, "a coordinated failover loses nothing")
}

func TestSentinelsFailOverToAReplica(t *testing.T) {
	t.Parallel()
	s := redistest.StartSentinels(t, 1, 3)
	old := s.Master()
	opts, err := redis.ParseFailoverURL("redis://" + s.SentinelServers()[0].Addr() + "?master_name=" + redistest.SentinelMaster)
	require.NoError(t, err)
	cl := redis.NewFailoverClient(opts)
	t.Cleanup(func() { _ = cl.Close() })
	ctx := context.Background()
	require.NoError(t, cl.Set(ctx, "k", "v", 0).Err())
	promoted := s.Failover()
	assert.NotEqual(t, old.Addr(), promoted.Addr())
	require.Eventually(t, func() bool { return cl.Set(ctx, "k2", "v", 0).Err() == nil }, 10e9, 50e6, "the client follows the new master")
	got, err := cl.Get(ctx, "k").Result()
	require.NoError(t, err)
	assert.Equal(t, "v", got)
}
