// Package roundtrips counts a go-redis client's round trips to Redis: one per command sent
// alone, one per pipeline (an auto-pipelined batch included) however many commands it
// carries. The bench reports them per stage transition, and tests assert them.
package roundtrips

import (
	"context"
	"net"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// Counter is a go-redis hook (client.AddHook) that counts round trips, except those made on
// a context marked Uncounted.
type Counter struct{ n atomic.Int64 }

var _ redis.Hook = (*Counter)(nil)

// Count returns the round trips so far.
func (c *Counter) Count() int64 { return c.n.Load() }

// DialHook passes dials through.
func (c *Counter) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

// ProcessHook counts a command sent alone.
func (c *Counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !isUncounted(ctx) {
			c.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook counts a pipeline.
func (c *Counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !isUncounted(ctx) {
			c.n.Add(1)
		}
		return next(ctx, cmds)
	}
}

// uncountedKey marks a context whose calls a Counter ignores.
type uncountedKey struct{}

// Uncounted returns ctx marked so that a Counter ignores the calls made on it (a bench's own
// calls, which are not what it measures).
func Uncounted(ctx context.Context) context.Context {
	return context.WithValue(ctx, uncountedKey{}, true)
}

func isUncounted(ctx context.Context) bool {
	v, _ := ctx.Value(uncountedKey{}).(bool)
	return v
}
