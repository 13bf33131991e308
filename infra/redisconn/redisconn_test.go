package redisconn_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redisconn"
	"github.com/executor-dev/executor/infra/redistest"
)

func TestOpenBuildsTheClientTheURLNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     redisconn.Config
		mode    redisconn.Mode
		addrs   []string
		master  string
		cluster bool // a *redis.ClusterClient, else a *redis.Client
	}{
		{name: "one node", cfg: redisconn.Config{URL: "redis://:pw@10.0.0.1:6380/3"}, mode: redisconn.Single, addrs: []string{"10.0.0.1:6380"}},
		{name: "one node over TLS", cfg: redisconn.Config{URL: "rediss://10.0.0.1:6380/0"}, mode: redisconn.Single, addrs: []string{"10.0.0.1:6380"}},
		{name: "cluster by addr", cfg: redisconn.Config{URL: "redis://10.0.0.1:7000?addr=10.0.0.2:7000&addr=10.0.0.3:7000"},
			mode: redisconn.Cluster, addrs: []string{"10.0.0.1:7000", "10.0.0.2:7000", "10.0.0.3:7000"}, cluster: true},
		{name: "cluster by seed", cfg: redisconn.Config{URL: "redis://u:p@10.0.0.1:7000", Cluster: true},
			mode: redisconn.Cluster, addrs: []string{"10.0.0.1:7000"}, cluster: true},
		{name: "sentinel", cfg: redisconn.Config{URL: "redis+sentinel://:pw@10.0.0.1:26379,10.0.0.2,10.0.0.3:26380/mymaster/2?sentinel_password=s"},
			mode: redisconn.Sentinel, addrs: []string{"10.0.0.1:26379", "10.0.0.2:26379", "10.0.0.3:26380"}, master: "mymaster"},
		{name: "sentinel, go-redis form", cfg: redisconn.Config{URL: "redis://10.0.0.1:26379?master_name=m&addr=10.0.0.2:26379&password=pw"},
			mode: redisconn.Sentinel, addrs: []string{"10.0.0.1:26379", "10.0.0.2:26379"}, master: "m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := redisconn.Open(tt.cfg)
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Client.Close() })
			assert.Equal(t, tt.mode, c.Mode)
			assert.Equal(t, tt.addrs, c.Addrs)
			assert.Equal(t, tt.master, c.Master)
			_, isCluster := c.Client.(*redis.ClusterClient)
			assert.Equal(t, tt.cluster, isCluster)
		})
	}
}

func TestOpenRefusesBadURLs(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]redisconn.Config{
		"not a URL":                  {URL: "redis://[::1"},
		"unknown scheme":             {URL: "http://10.0.0.1:6379"},
		"cluster with a database":    {URL: "redis://10.0.0.1:7000/2?addr=10.0.0.2:7000"},
		"sentinel without master":    {URL: "redis+sentinel://10.0.0.1:26379"},
		"sentinel, path too long":    {URL: "redis+sentinel://10.0.0.1:26379/m/0/x"},
		"sentinel, empty address":    {URL: "redis+sentinel://10.0.0.1:26379,/m"},
		"sentinel with cluster flag": {URL: "redis+sentinel://10.0.0.1:26379/m", Cluster: true},
		"unknown option":             {URL: "redis://10.0.0.1:7000?addr=10.0.0.2:7000&bogus=1"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := redisconn.Open(cfg)
			require.ErrorIs(t, err, redisconn.ErrURL)
		})
	}
}

func TestCheckRefusesAClusterNodeGivenAsOneNode(t *testing.T) {
	t.Parallel()
	cluster := redistest.StartCluster(t, 3, 0)
	ctx := context.Background()

	single, err := redisconn.Open(redisconn.Config{URL: cluster.SeedURL()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = single.Client.Close() })
	require.ErrorIs(t, redisconn.Check(ctx, single), redisconn.ErrClusterNode)

	seed, err := redisconn.Open(redisconn.Config{URL: cluster.SeedURL(), Cluster: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = seed.Client.Close() })
	require.NoError(t, redisconn.Check(ctx, seed))
	for _, k := range []string{"a", "b", "c", "d"} { // keys of every master, through one seed
		require.NoError(t, seed.Client.Set(ctx, k, "v", 0).Err())
	}

	plain, err := redisconn.Open(redisconn.Config{URL: redistest.Start(t).URL()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = plain.Client.Close() })
	require.NoError(t, redisconn.Check(ctx, plain))
}

func TestAnUnparsableURLIsNotQuotedWithItsPassword(t *testing.T) {
	t.Parallel()
	_, err := redisconn.Open(redisconn.Config{URL: "redis://u:topsecret@[::1:6379/0"})
	require.ErrorIs(t, err, redisconn.ErrURL)
	assert.NotContains(t, err.Error(), "topsecret")
}

func TestRedactMasksPasswords(t *testing.T) {
	t.Parallel()
	got := redisconn.Redact("redis+sentinel://u:secret@h:26379/m?sentinel_password=s2&password=s3")
	assert.NotContains(t, got, "secret")
	assert.NotContains(t, got, "s2")
	assert.NotContains(t, got, "s3")
	assert.Contains(t, got, "u:xxxxx@h:26379/m")
}

// On Sentinel, a master with fewer min-replicas-to-write than replicas is reported: a
// coordinated failover could discard writes it acknowledged.
func TestAdviceOnSentinelWhenFailoverCanDiscardWrites(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		opts    []redistest.Option
		advises bool
	}{
		{name: "no min-replicas-to-write", advises: true},
		{name: "min-replicas-to-write as many as replicas", opts: []redistest.Option{redistest.Args("--min-replicas-to-write", "1")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := redistest.StartSentinels(t, 1, 2, tt.opts...)
			c, err := redisconn.Open(redisconn.Config{URL: s.URL()})
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Client.Close() })
			advice := redisconn.Advice(context.Background(), c)
			if tt.advises {
				assert.Contains(t, advice, "min-replicas-to-write 1")
			} else {
				assert.Empty(t, advice)
			}
		})
	}
}
