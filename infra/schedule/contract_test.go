package schedule

import (
	"context"
	"testing"
	"time"

	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/infra/schedule/schedtest"
)

// The schedulers' contract suite (infra/schedule/schedtest), against each scheduler.

func TestMemoryContract(t *testing.T) {
	t.Parallel()
	schedtest.Run(t, func(t *testing.T) schedtest.Subject {
		t.Helper()
		return subject(t, NewMemory(MemoryOptions{RetryDelay: schedtest.RetryDelay, Logger: testLogger(t)}), nil)
	})
}

func TestRedisContract(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	schedtest.Run(t, func(t *testing.T) schedtest.Subject {
		t.Helper()
		// A Fallback of an hour: every start in the contract is explained by the timer set
		// for the earliest entry and the pub/sub wake-up, never by the periodic check.
		r := NewRedis(srv.Client(), RedisOptions{
			Prefix: "contract:" + t.Name() + ":", Fallback: time.Hour,
			ClaimTTL: schedtest.RetryDelay, Logger: testLogger(t),
		})
		return subject(t, r, func(t *testing.T) { settle(t, r) })
	})
}

// subject is s under the contract suite: started by the suite through Start, stopped when
// the test ends, settled by settle (nil: nothing to wait for). The one place that starts and
// stops the suite's schedulers.
func subject(t *testing.T, s scheduler, settle func(t *testing.T)) schedtest.Subject {
	t.Helper()
	t.Cleanup(func() { stop(t, s) })
	return schedtest.Subject{
		Scheduler: s,
		Start:     func(due func(ctx context.Context, planID string) error) { startWith(t, s, due) },
		Settle:    settle,
	}
}
