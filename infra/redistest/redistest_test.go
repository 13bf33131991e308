package redistest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
)

func TestServerStopsKillsAndRestartsEmpty(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	assert.NotEqual(t, "127.0.0.1:6379", srv.Addr(), "never the shared port")
	c := srv.Client()
	ctx := context.Background()
	require.NoError(t, c.Set(ctx, "k", "v", 0).Err())

	srv.Kill()
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	require.Error(t, c.Ping(short).Err(), "a killed server does not answer")

	srv.Restart()
	n, err := c.Exists(ctx, "k").Result()
	require.NoError(t, err)
	assert.Zero(t, n, "a restarted server is empty")

	srv.Stop()
	srv.Restart()
	require.NoError(t, c.Ping(ctx).Err())
}

func TestArgsConfigureTheServerAtEveryStart(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Args("--maxmemory", "2mb", "--maxmemory-policy", "noeviction"))
	c := srv.Client()
	ctx := context.Background()
	for range 2 {
		got, err := c.ConfigGet(ctx, "maxmemory*").Result()
		require.NoError(t, err)
		assert.Equal(t, "2097152", got["maxmemory"])
		assert.Equal(t, "noeviction", got["maxmemory-policy"])
		srv.Kill()
		srv.Restart()
	}
}
