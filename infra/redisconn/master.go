package redisconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/redis/go-redis/v9"
)

// ErrMasterChanged is returned for the first connection to a master other than the one the
// client wrote to before (a Sentinel failover): the new master may lack writes the old one
// acknowledged (replication is asynchronous, and a failover made while the old master lived
// lets it take writes that the sentinels then discard). Wrapped into the outage's error, it
// makes the executor treat the switch as a loss of data: it writes back what it holds.
var ErrMasterChanged = errors.New("redisconn: the master changed")

// masterWatch is a go-redis dial hook that notices when connections start going to another
// address than before: with Sentinel, the master changed. The first connection to the new
// master is refused (closed, ErrMasterChanged wrapped with wrap), so that no command reaches
// it before the executor knows of the switch; the next ones go through.
type masterWatch struct {
	wrap error // wrapped with ErrMasterChanged: makes the dial's error an outage's

	mu       sync.Mutex
	addr     string // the remote address of the last connection made
	onChange func(from, to string)
}

var _ redis.Hook = (*masterWatch)(nil)

// DialHook watches each new connection's remote address.
func (w *masterWatch) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		remote := conn.RemoteAddr().String()
		w.mu.Lock()
		prev, fn := w.addr, w.onChange
		w.addr = remote
		w.mu.Unlock()
		if prev == "" || prev == remote {
			return conn, nil
		}
		_ = conn.Close()
		if fn != nil {
			fn(prev, remote)
		}
		return nil, fmt.Errorf("%w from %s to %s: it may lack writes the old one acknowledged: %w", ErrMasterChanged, prev, remote, w.wrap)
	}
}

// ProcessHook leaves commands as they are.
func (w *masterWatch) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

// ProcessPipelineHook leaves pipelines as they are.
func (w *masterWatch) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// OnMasterChange registers fn, called (once per switch, on the dialing goroutine: it must not
// block) when the client's connections start going to another master than before. Only a
// Sentinel client watches: on one node the address does not change, and a Redis Cluster
// routes by slot to many masters.
func (c *Conn) OnMasterChange(fn func(from, to string)) {
	if c.watch == nil {
		return
	}
	c.watch.mu.Lock()
	defer c.watch.mu.Unlock()
	c.watch.onChange = fn
}
