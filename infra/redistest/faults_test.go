package redistest_test

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
)

// A StallReply forwards the request (Redis applies it) and black-holes the replies of its
// connection: the client times out, while its other connections keep working.
func TestStallReplyAppliesTheRequestAndTheClientTimesOut(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var armed atomic.Bool
	proxy := srv.NewFaultProxy(redistest.Faults{Rule: func(chunk []byte) redistest.Fault {
		if bytes.Contains(chunk, []byte("stalled")) && armed.CompareAndSwap(true, false) {
			return redistest.Fault{Kind: redistest.StallReply}
		}
		return redistest.Fault{}
	}})
	proxy.Inject(true)
	c := redis.NewClient(&redis.Options{Addr: proxy.Addr(), ReadTimeout: 300 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	require.NoError(t, c.Ping(ctx).Err())

	armed.Store(true)
	err := c.Set(ctx, "stalled", "v", 0).Err()
	require.Error(t, err, "no reply reaches the client")

	got, err := srv.Client().Get(ctx, "stalled").Result()
	require.NoError(t, err, "Redis applied the request")
	require.Equal(t, "v", got)
	require.NoError(t, c.Set(ctx, "next", "w", 0).Err(), "a new connection through the proxy answers")
	require.EqualValues(t, 1, proxy.Stats().RepliesLost)
}
