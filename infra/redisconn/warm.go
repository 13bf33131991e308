package redisconn

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Warm opens Config.Warm connections to each master at once and readies them (go-redis sends
// a connection's handshake, HELLO, on its first use, also for the idle connections its pool
// dials for MinIdleConns, which is why that is not used), then leaves them idle in the pool,
// which keeps them (Config.Warm). On a slow link a command on a connection never used waits a
// round trip for the handshake before its own: the first refreshes of a shared executor's
// leases would land after their deadlines. A connection the pool closes later (a command that
// timed out loses its connection) is replaced by a new one, readied on its first use.
func Warm(ctx context.Context, c *Conn) error {
	n := c.warm
	if n <= 0 {
		return nil
	}
	var err error
	switch cl := c.Client.(type) {
	case *redis.Client:
		err = warmClient(ctx, cl, n)
	case *redis.ClusterClient:
		err = cl.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			return warmClient(ctx, node, n)
		})
	}
	if err != nil {
		return fmt.Errorf("redisconn: warm the pool: %w", err)
	}
	return nil
}

// warmClient takes n connections of cl's pool at once (at most half the pool: the connections
// are held until every ping has answered, and others use the pool meanwhile, such as a
// Cluster client's slot reloads), pings on each, and gives them back.
func warmClient(ctx context.Context, cl *redis.Client, n int) error {
	n = max(min(n, cl.Options().PoolSize/2), 1)
	conns := make([]*redis.Conn, n)
	errs := make([]error, n)
	for i := range conns {
		conns[i] = cl.Conn()
	}
	done := make(chan int, n)
	for i, cn := range conns {
		go func() {
			errs[i] = cn.Ping(ctx).Err()
			done <- i
		}()
	}
	for range conns {
		<-done
	}
	for i, cn := range conns {
		errs[i] = errors.Join(errs[i], cn.Close())
	}
	return errors.Join(errs...)
}

// keepIdle is the pool's ConnMaxIdleTime: never close an idle connection when connections
// are warmed, else def (go-redis's default).
func keepIdle(warm int, def time.Duration) time.Duration {
	if warm > 0 {
		return -1
	}
	return def
}
