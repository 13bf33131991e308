//go:build soak

package bench

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/infra/redistest"
)

// Soak shape: the issue-14 report's load (5 tenants a plan, the bench's 10 noop stages), every
// plan with tenants of its own, soakPlansAtOnce plans in flight.
const (
	soakTenantsPerPlan = 5
	soakStages         = 10
	soakPlansAtOnce    = 16
	soakFirst          = 10_000  // tasks run before the first measurement
	soakTotal          = 200_000 // tasks run before the last one
)

// memSample is the process's memory at one point of the soak, after a full collection.
type memSample struct {
	tasks     int
	heapInuse uint64 // runtime.MemStats.HeapInuse
	rss       int64  // /proc/self/status VmRSS, bytes
}

// sampleMemory collects the garbage, returns freed memory to the OS, and reads the heap in use
// and the resident set size.
func sampleMemory(t *testing.T, tasks int) memSample {
	t.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memSample{tasks: tasks, heapInuse: ms.HeapInuse, rss: vmRSS(t)}
}

// vmRSS reads VmRSS from /proc/self/status, in bytes.
func vmRSS(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	require.NoError(t, sc.Err())
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// runSoakPlans runs plans [from, to) (each soakTenantsPerPlan tasks of new tenants),
// soakPlansAtOnce at a time, each to completion.
func runSoakPlans(t *testing.T, e *executor, from, to int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	var next atomic.Int64
	next.Store(int64(from))
	var wg sync.WaitGroup
	errs := make(chan error, soakPlansAtOnce)
	for range soakPlansAtOnce {
		wg.Go(func() {
			for {
				n := int(next.Add(1) - 1)
				if n >= to {
					return
				}
				sub := submission{name: "soak", stages: soakStages, tenants: tenantIDs(fmt.Sprintf("p%06d-", n), soakTenantsPerPlan), concurrency: soakTenantsPerPlan}
				if _, err := runPlan(ctx, &useCases{svcs: []*app.Service{e.svc}}, sub); err != nil {
					errs <- err
					cancel()
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// TestSoakMemoryStaysFlat runs 200,000 tasks (40,000 plans of 5 new tenants × 10 noop stages)
// through an executor wired as serve wires it, on a private redis-server, and reports the
// heap in use and the RSS after 10,000 tasks and every 50,000 after (docs/performance.md,
// "Bounded memory"). Memory must stay within 20 % of the first figure: the memory mirror
// keeps the active tasks, the journal and a bounded cache, not every task run. A soak of a
// few minutes: behind the build tag soak (make soak), not in make test.
func TestSoakMemoryStaysFlat(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	e, err := newExecutor(ctx, Config{RedisURL: srv.URL(), Workers: DefaultWorkers}, "soak:", "", slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		assert.NoError(t, e.Stop(cctx)) // the keys go with the private redis-server
	})
	start := sampleMemory(t, 0)
	t.Logf("tasks %7d: heap in use %6.1f MB, RSS %6.1f MB", 0, mb(start.heapInuse), mb(start.rss))
	var samples []memSample
	done := 0
	for _, upTo := range []int{soakFirst, 50_000, 100_000, 150_000, soakTotal} {
		t0 := time.Now()
		runSoakPlans(t, e, done/soakTenantsPerPlan, upTo/soakTenantsPerPlan)
		rate := float64(upTo-done) / time.Since(t0).Seconds()
		done = upTo
		s := sampleMemory(t, done)
		samples = append(samples, s)
		t.Logf("tasks %7d: heap in use %6.1f MB, RSS %6.1f MB (%.0f tasks/s)", done, mb(s.heapInuse), mb(s.rss), rate)
	}
	require.False(t, e.Degraded(), "Redis went away during the soak: the figures are not valid")
	first, last := samples[0], samples[len(samples)-1]
	t.Logf("from %d to %d tasks: heap in use %+.1f %%, RSS %+.1f %%", first.tasks, last.tasks,
		growth(float64(first.heapInuse), float64(last.heapInuse)), growth(float64(first.rss), float64(last.rss)))
	assert.LessOrEqual(t, float64(last.heapInuse), 1.2*float64(first.heapInuse), "heap in use flat within 20 %")
	assert.LessOrEqual(t, float64(last.rss), 1.2*float64(first.rss), "RSS flat within 20 %")
}

// runPlan submits a plan and waits until it completed.
func runPlan(ctx context.Context, t target, s submission) (string, error) {
	id, err := t.submit(ctx, s)
	if err != nil {
		return "", fmt.Errorf("bench: submit %s: %w", s.name, err)
	}
	return id, waitCompleted(ctx, t, id)
}

func mb[T int64 | uint64](v T) float64 { return float64(v) / (1 << 20) }

func growth(from, to float64) float64 { return 100 * (to - from) / from }
