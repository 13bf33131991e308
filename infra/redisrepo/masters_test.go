package redisrepo_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/outage"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/redistest"
)

// A Redis Cluster master replaced by its replica because it died may have lost writes it
// acknowledged: the store notices at its next check and renews the generation (so that every
// executor writes back what it holds). A coordinated CLUSTER FAILOVER, after which the old
// master replicates the new one, loses nothing and renews nothing.
func TestAClusterMasterLostIsTakenForALossOfData(t *testing.T) {
	t.Parallel()
	cluster := redistest.StartCluster(t, 3, 1)
	client := cluster.Client()
	mon := outage.NewMonitor(slog.New(slog.DiscardHandler))
	s := redisrepo.New(client, redisrepo.Options{Monitor: mon, Logger: slog.New(slog.DiscardHandler), LeaseTTL: 600 * time.Millisecond})
	require.NoError(t, s.Start(context.Background()))
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	ctx := context.Background()
	key := rediskey.New("").Generation()
	token := func() string {
		v, err := client.HGet(ctx, key, "token").Result()
		require.NoError(t, err)
		return v
	}
	first := token()

	// The generation's own master fails over in a coordinated way: nothing to write back.
	cluster.Failover(cluster.MasterOf(key))
	time.Sleep(2 * time.Second) // several checks (every 200 ms)
	require.Equal(t, first, token(), "a coordinated failover is no loss")

	// Another master dies; its replica takes over.
	var victim *redistest.Server
	for _, m := range cluster.Masters() {
		if m != cluster.MasterOf(key) {
			victim = m
			break
		}
	}
	victim.Kill()
	cluster.WaitHealthy()
	require.Eventually(t, func() bool {
		v, err := client.HGet(ctx, key, "token").Result()
		return err == nil && v != first
	}, 20*time.Second, 50*time.Millisecond, "the generation is renewed")
	require.Eventually(t, func() bool { d, _ := mon.Degraded(); return !d }, 20*time.Second, 50*time.Millisecond, "written back, degraded mode over")
}
