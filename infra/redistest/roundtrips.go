package redistest

import (
	"context"
	"net"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// RoundTrips is a go-redis hook that counts round trips: one per command sent alone, one per
// pipeline (however many commands it carries).
type RoundTrips struct{ n atomic.Int64 }

// Count returns the round trips so far.
func (r *RoundTrips) Count() int64 { return r.n.Load() }

// DialHook passes dials through.
func (r *RoundTrips) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

// ProcessHook counts a command sent alone.
func (r *RoundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook counts a pipeline.
func (r *RoundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmds)
	}
}

// CountingClient returns a new client for the server whose round trips are counted.
func (s *Server) CountingClient() (*redis.Client, *RoundTrips) {
	c := s.Client()
	rt := &RoundTrips{}
	c.AddHook(rt)
	return c, rt
}
