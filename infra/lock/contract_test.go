package lock_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/lock/locktest"
	"github.com/executor-dev/executor/infra/outage"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redistest"
)

// The lockers' contract suite (infra/lock/locktest), against each locker; the Redis ones on
// a private redis-server each.

func TestMemoryContract(t *testing.T) {
	t.Parallel()
	locktest.Run(t, func(*testing.T, time.Duration) locktest.Subject {
		return locktest.Subject{Locker: lock.NewMemory(), Loss: locktest.LostAtOnce}
	})
}

func TestRedisContract(t *testing.T) {
	t.Parallel()
	locktest.Run(t, func(t *testing.T, ttl time.Duration) locktest.Subject {
		f := newRedisFixture(t, ttl)
		return locktest.Subject{Locker: f.locker, Expires: true, Loss: locktest.LostAtRefresh, Stored: storedIn(f.raw)}
	})
}

func TestFailoverContract(t *testing.T) {
	t.Parallel()
	locktest.Run(t, func(t *testing.T, ttl time.Duration) locktest.Subject {
		srv := redistest.Start(t)
		locker, _ := newForceFailover(t, srv, ttl)
		return locktest.Subject{Locker: locker, Expires: true, Loss: locktest.LostSoon, Stored: storedIn(srv.Client())}
	})
}

// The self-fencing Failover (executors sharing a Redis), whose watchdog starts only once a
// refresh is due, or at a force release of this process.
func TestSelfFencingFailoverContract(t *testing.T) {
	t.Parallel()
	locktest.Run(t, func(t *testing.T, ttl time.Duration) locktest.Subject {
		srv := redistest.Start(t)
		client := srv.Client()
		log := slog.New(slog.DiscardHandler)
		locker := lock.NewFailover(client, lock.RedisOptions{Keys: rediskey.New(""), TTL: ttl, Logger: log, SelfFence: true},
			outage.NewMonitor(log))
		return locktest.Subject{Locker: locker, Expires: true, Loss: locktest.LostSoon, Stored: storedIn(srv.Client())}
	})
}

// storedIn reads a tenant's lease key (under the default prefix) on raw.
func storedIn(raw *redis.Client) func(ctx context.Context, tenantID string) (string, bool, error) {
	return func(ctx context.Context, tenantID string) (string, bool, error) {
		val, err := raw.Get(ctx, lockKey(tenantID)).Result()
		if errors.Is(err, redis.Nil) {
			return "", false, nil
		}
		return val, err == nil, err
	}
}
