package roundtrips_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/infra/roundtrips"
)

func TestCountsCommandsAndPipelinesNotUncountedCalls(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	// One connection, so that its handshake is made once, in the Ping.
	client := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 1})
	t.Cleanup(func() { _ = client.Close() })
	trips := &roundtrips.Counter{}
	client.AddHook(trips)
	ctx := context.Background()
	// The connection's handshake counts too, and go-redis may make it again after the first
	// pipeline: warm up with both before counting.
	for range 2 {
		require.NoError(t, client.Ping(ctx).Err())
		_, err := client.Pipelined(ctx, func(p redis.Pipeliner) error { p.Ping(ctx); return nil })
		require.NoError(t, err)
	}
	base := trips.Count()

	require.NoError(t, client.Set(ctx, "k", "v", 0).Err())
	assert.EqualValues(t, 1, trips.Count()-base, "a command sent alone")

	_, err := client.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Get(ctx, "k")
		p.Incr(ctx, "n")
		p.Incr(ctx, "n")
		return nil
	})
	require.NoError(t, err)
	assert.EqualValues(t, 2, trips.Count()-base, "a pipeline of three commands is one round trip")

	require.NoError(t, client.Get(roundtrips.Uncounted(ctx), "k").Err())
	assert.EqualValues(t, 2, trips.Count()-base, "an uncounted call")
}
