package dispatch

import (
	"context"
	"fmt"
	"testing"

	"github.com/executor-dev/executor/infra/redistest"
)

// BenchmarkClaimDone measures one Claim and one Done of a claimed task (two script round
// trips on Redis), sequentially and from parallel goroutines sharing one plan.
func BenchmarkClaimDone(b *testing.B) {
	b.Run("memory", func(b *testing.B) { benchClaimDone(b, NewMemory(MemoryOptions{})) })
	b.Run("redis", func(b *testing.B) {
		srv := redistest.Start(b)
		benchClaimDone(b, NewRedis(srv.Client(), RedisOptions{Prefix: "bench:"}))
	})
}

func benchClaimDone(b *testing.B, d dispatcher) {
	b.Helper()
	ctx := context.Background()
	// push queues n fresh ids under plan (not timed).
	push := func(b *testing.B, plan string, n int) {
		b.Helper()
		b.StopTimer()
		all := make([]string, n)
		for i := range all {
			all[i] = fmt.Sprintf("T%08d", i)
		}
		if err := d.Push(ctx, plan, Limits{MaxConcurrency: 1 << 20}, all); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.Run("sequential", func(b *testing.B) {
		push(b, "seq", b.N)
		for range b.N {
			id, _, err := d.Claim(ctx, "seq", "bench")
			if err != nil || id == "" {
				b.Fatalf("claim: %q %v", id, err)
			}
			if _, _, err := d.Done(ctx, "seq", id, false); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		push(b, "par", b.N)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				id, _, err := d.Claim(ctx, "par", "bench")
				if err != nil || id == "" {
					b.Errorf("claim: %q %v", id, err)
					return
				}
				if _, _, err := d.Done(ctx, "par", id, false); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
