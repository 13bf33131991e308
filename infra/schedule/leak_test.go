package schedule

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/infra/schedule/schedtest"
)

// Not parallel: the goroutine counts are the whole process's.
func TestStopLeaksNoGoroutines(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		new  func(t *testing.T) scheduler
	}{
		{"memory", func(t *testing.T) scheduler {
			t.Helper()
			return NewMemory(MemoryOptions{RetryDelay: 50 * time.Millisecond, Logger: testLogger(t)})
		}},
		{"redis", func(t *testing.T) scheduler {
			t.Helper()
			srv := redistest.Start(t)
			client := srv.Client()
			require.NoError(t, client.Ping(ctx).Err())
			return NewRedis(client, RedisOptions{ClaimTTL: 50 * time.Millisecond, Logger: testLogger(t)})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.new(t)
			before := redistest.SettledGoroutines(t)
			rec := schedtest.NewRecorder()
			rec.FailNext("failing", 1)
			startWith(t, s, rec.Due)
			now := time.Now()
			require.NoError(t, s.Schedule(ctx, "P1", now))
			require.NoError(t, s.Schedule(ctx, "failing", now))
			require.NoError(t, s.Schedule(ctx, "in an hour", now.Add(time.Hour)))
			rec.WaitCalls(t, "P1", 1)
			rec.WaitCalls(t, "failing", 2)
			stop(t, s)
			stop(t, s) // idempotent
			redistest.RequireGoroutinesBackTo(t, before)
		})
	}
}
