package redisconn_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redisconn"
	"github.com/executor-dev/executor/infra/redistest"
)

// A slow link counts its request chunks (FaultProxy.SetLatency): n commands at once on a
// warmed pool send n chunks, one each; on a pool whose idle connections were never used, each
// sends its handshake (HELLO) first, and waits a round trip more.
func TestWarmReadiesPooledConnectionsSoTheirFirstCommandCostsOneRoundTrip(t *testing.T) {
	t.Parallel()
	const n = 6
	tests := []struct {
		name string
		warm bool
	}{
		{name: "warmed", warm: true},
		{name: "cold", warm: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rs := redistest.Start(t)
			proxy := rs.NewProxy()
			conn, err := redisconn.Open(redisconn.Config{URL: proxy.URL(), Timeout: 5 * time.Second, Warm: n})
			require.NoError(t, err)
			t.Cleanup(func() { _ = conn.Client.Close() })
			ctx := context.Background()
			require.NoError(t, conn.Client.Ping(ctx).Err(), "the pool dials its idle connections")
			if tt.warm {
				require.NoError(t, redisconn.Warm(ctx, conn))
			}
			if !tt.warm { // the pool's own idle connections, dialed and not readied
				for range n - 1 {
					require.NoError(t, conn.Client.Ping(ctx).Err())
				}
			}

			proxy.SetLatency(50 * time.Millisecond)
			var wg sync.WaitGroup
			for range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					assert.NoError(t, conn.Client.Ping(ctx).Err())
				}()
			}
			wg.Wait()
			if tt.warm {
				assert.Equal(t, int64(n), proxy.Stats().Lagged, "request chunks sent for %d commands at once", n)
			} else { // the connection of the first PING is ready already
				assert.Greater(t, proxy.Stats().Lagged, int64(n), "handshakes sent before the %d commands", n)
			}
		})
	}
}

// On a Redis Cluster each master's pool is readied; asking for more connections than its
// pool may lend at once readies what it can instead of waiting for connections it holds itself.
func TestWarmOnAClusterAsksEachMasterForWhatItsPoolLends(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3, 1)
	conn, err := redisconn.Open(redisconn.Config{URL: c.URL(), Timeout: 5 * time.Second, Warm: 1000})
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Client.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, redisconn.Warm(ctx, conn))
	require.NoError(t, conn.Client.Ping(ctx).Err())
}
