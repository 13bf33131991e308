package schedule

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/executor-dev/executor/infra/redistest"
)

// BenchmarkStartLateness measures, per entry scheduled 20 ms ahead, the time from its
// startAt to the Due call (target: within 50 ms), and reports its p50, p99 and max.
func BenchmarkStartLateness(b *testing.B) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	b.Run("memory", func(b *testing.B) {
		benchLateness(b, NewMemory(MemoryOptions{Logger: quiet}))
	})
	b.Run("redis", func(b *testing.B) {
		srv := redistest.Start(b)
		benchLateness(b, NewRedis(srv.Client(), RedisOptions{Prefix: "bench:", Logger: quiet}))
	})
}

func benchLateness(b *testing.B, s scheduler) {
	b.Helper()
	ctx := context.Background()
	called := make(chan time.Time, 1)
	startWith(b, s, func(context.Context, string) error {
		called <- time.Now()
		return nil
	})
	defer stop(b, s)

	late := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		at := time.Now().Add(20 * time.Millisecond)
		if err := s.Schedule(ctx, fmt.Sprintf("P%d", i), at); err != nil {
			b.Fatal(err)
		}
		select {
		case got := <-called:
			late = append(late, got.Sub(at))
		case <-time.After(10 * time.Second):
			b.Fatalf("entry %d never started", i)
		}
	}
	b.StopTimer()
	slices.Sort(late)
	b.ReportMetric(percentile(late, 50), "p50-ms")
	b.ReportMetric(percentile(late, 99), "p99-ms")
	b.ReportMetric(percentile(late, 100), "max-ms")
}

// percentile returns the p-th percentile (nearest rank) of sorted, in milliseconds.
func percentile(sorted []time.Duration, p int) float64 {
	rank := (len(sorted)*p + 99) / 100 // ceil(len*p/100)
	rank = max(rank, 1)
	return float64(sorted[rank-1]) / float64(time.Millisecond)
}
