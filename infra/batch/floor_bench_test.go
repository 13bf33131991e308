package batch_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/infra/batch"
)

// casWrite is the shape of a task write (save_task.lua): a compare-and-set on a version, a
// handful of fields set.
var casWrite = redis.NewScript(`
local v = redis.call('HGET', KEYS[1], 'version')
if v and tonumber(v) ~= tonumber(ARGV[1]) then return 2 end
redis.call('HSET', KEYS[1], 'version', tonumber(ARGV[1]) + 1, unpack(ARGV, 2))
return 1`)

// floorStages and floorStage are the tasks' stages in BenchmarkRolloutShapeFloor: the
// deployment shape's 3 per task, shortened from 1 s so that a run of the benchmark takes
// seconds; what matters is that the runs' calls arrive in bursts, as their stages end together.
const (
	floorStages   = 3
	floorStage    = 100 * time.Millisecond
	floorInFlight = 1000
)

// BenchmarkRolloutShapeFloor is the floor under the executor's CPU per stage transition in the
// deployment shape of issue 38 (docs/performance.md, issue 38's "Third session"): 1,000 tasks in flight, each
// of 3 stages, whose script calls go through a Scripter as the shared executor's do (the
// full-duplex pipeline, gathered for 1 ms), and nothing else: no task to encode, no lease, no
// mirror, no event. Its cpu-µs/transition (getrusage of this process) is the cost of the
// transport alone, at the calls per task the executor makes today (12: the lease's take and
// release, the fence bump, the start, 3 stage ends, the tenant's release, done, an index row,
// the claim and the retention, shared) and at half as many (what fusing them would leave).
//
//	go test -run '^$' -bench RolloutShapeFloor -benchtime 30000x ./infra/batch
func BenchmarkRolloutShapeFloor(b *testing.B) {
	for _, calls := range []int{12, 6} {
		b.Run("calls="+strconv.Itoa(calls), func(b *testing.B) {
			o := fullDuplex()
			o.FullDuplexIdleTimeout, o.FullDuplexMaxHold = time.Hour, time.Hour
			_, client, s := newScripterWith(b, batch.Options{Timeout: time.Second, Pipeline: o, Gather: time.Millisecond})
			ctx := context.Background()
			if err := casWrite.Load(ctx, client).Err(); err != nil {
				b.Fatal(err)
			}
			tasks := (b.N + floorStages - 1) / floorStages
			slots := make(chan struct{}, floorInFlight)
			var wg sync.WaitGroup
			var failed error
			var once sync.Once
			b.ResetTimer()
			cpu0 := cpuTime(b)
			for i := range tasks {
				slots <- struct{}{}
				wg.Go(func() {
					defer func() { <-slots }()
					if err := floorTask(ctx, s, "floor:{"+strconv.Itoa(i)+"}", calls); err != nil {
						once.Do(func() { failed = err })
					}
				})
			}
			wg.Wait()
			cpu := cpuTime(b) - cpu0
			b.StopTimer()
			if failed != nil {
				b.Fatal(failed)
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(tasks*floorStages), "cpu-µs/transition")
		})
	}
}

// floorTask makes a task's calls on key: those of its start, then those of each stage's end
// after the stage's sleep.
func floorTask(ctx context.Context, s *batch.Scripter, key string, calls int) error {
	perStage := calls / (floorStages + 1)
	version := 0
	write := func() error {
		err := casWrite.Run(ctx, s, []string{key}, version, "status", "RUNNING", "stage", "s1", "attempt", "1",
			"updatedAt", time.Now().Format(time.RFC3339Nano), "fence", "7").Err()
		version++
		return err
	}
	for range calls - perStage*floorStages {
		if err := write(); err != nil {
			return err
		}
	}
	for range floorStages {
		time.Sleep(floorStage)
		for range perStage {
			if err := write(); err != nil {
				return err
			}
		}
	}
	return nil
}

// cpuTime is this process's CPU time, user and system.
func cpuTime(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(fmt.Errorf("getrusage: %w", err))
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
