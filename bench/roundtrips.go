package bench

import (
	"context"
	"net"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// uncountedKey marks a context whose Redis calls the round-trip counter ignores: the bench's
// own calls (Submit, WaitPlan, INFO), which are not stage transitions.
type uncountedKey struct{}

func uncounted(ctx context.Context) context.Context {
	return context.WithValue(ctx, uncountedKey{}, true)
}

func isUncounted(ctx context.Context) bool {
	v, _ := ctx.Value(uncountedKey{}).(bool)
	return v
}

// roundTrips is a go-redis hook that counts round trips: one per command sent alone, one per
// pipeline (however many commands it carries), except on uncounted contexts.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) count() int64 { return r.n.Load() }

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !isUncounted(ctx) {
			r.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !isUncounted(ctx) {
			r.n.Add(1)
		}
		return next(ctx, cmds)
	}
}
