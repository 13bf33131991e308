package bench

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// liveHeap is the runtime metric of the heap the last garbage collection found live, and
// stacks that of the goroutines' stacks.
const (
	liveHeap = "/gc/heap/live:bytes"
	stacks   = "/memory/classes/heap/stacks:bytes"
)

// rollout is what the deployment shape measures while its plan runs: the tenant queries.
type rollout struct {
	r      *runner
	cancel context.CancelFunc
	wg     sync.WaitGroup
	qerr   error
}

// startRollout starts the queries, which last until stop.
func startRollout(ctx context.Context, r *runner, tenants []string, res *Result) *rollout {
	d := &rollout{r: r}
	until, cancel := context.WithCancel(ctx)
	d.cancel = cancel
	res.QueriesDuringRollout = true
	d.wg.Go(func() { d.qerr = queryUntil(ctx, until, r, tenants, res) })
	return d
}

// stop ends the queries once the plan ended, elapsed after its Submit, and sets the makespan
// against the ideal.
func (d *rollout) stop(elapsed time.Duration, res *Result) error {
	d.cancel()
	d.wg.Wait()
	cfg := d.r.cfg
	res.InFlight = inFlight(cfg)
	waves := (cfg.Tenants + res.InFlight - 1) / res.InFlight
	ideal := time.Duration(waves*cfg.Stages) * cfg.StageDuration
	res.IdealMs = ms(ideal)
	res.MakespanRatio = float64(elapsed) / float64(ideal)
	return d.qerr
}

// inFlight is how many of the plan's tasks can run at once: its maxConcurrency, or every
// executor's workers (in-process), whichever is fewer.
func inFlight(cfg Config) int {
	n := min(cfg.Tenants, cfg.Concurrency)
	if cfg.Workers > 0 {
		n = min(n, cfg.Workers*max(1, cfg.Executors))
	}
	return n
}

// measureRuns measures what a task in flight costs the executors in-process: a plan of
// InFlight new tenants with one sleep stage of StageDuration; at a quarter, a half and three
// quarters of it, the live heap and the goroutines' stacks after a garbage collection, the
// goroutines, and the plan's tasks RUNNING; of those, the sample with the most tasks running
// (on a loaded machine some start late), less the footprint once the plan ended, over the tasks
// it found running. The mirror's copies of the tasks, which grow a little as a task ends,
// count against it: it reads low by that much.
func measureRuns(ctx context.Context, r *runner, res *Result) error {
	cfg := r.cfg
	n := inFlight(cfg)
	sub := submission{name: "bench-runs", stages: 1, tenants: tenantIDs(r.tenantPrefix+"r", n), concurrency: n,
		stageDuration: cfg.StageDuration}
	id, err := r.target.submit(ctx, sub)
	if err != nil {
		return fmt.Errorf("bench: submit %s: %w", sub.name, err)
	}
	start := time.Now()
	var during footprint
	running := 0
	for q := 1; q <= 3; q++ {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Until(start.Add(cfg.StageDuration * time.Duration(q) / 4))):
		}
		f := footprintNow()
		m, err := runningTasks(ctx, r.target, id, n)
		if err != nil {
			return err
		}
		if m > running || (m == running && f.goroutines > during.goroutines) {
			during, running = f, m
		}
	}
	if err := waitCompleted(ctx, r.target, id); err != nil {
		return err
	}
	after := footprintNow()
	if running == 0 {
		return fmt.Errorf("bench: plan %s: no task ran during its stage", id)
	}
	res.MemoryPerRunBytes = float64(during.bytes-after.bytes) / float64(running)
	res.GoroutinesPerRun = float64(during.goroutines-after.goroutines) / float64(running)
	return nil
}

// runningTasks returns how many of plan planID's tasks run, when the target tells (in-process);
// else n, the tasks that can run at once.
func runningTasks(ctx context.Context, t target, planID string, n int) (int, error) {
	c, ok := t.(interface {
		running(ctx context.Context, planID string) (int, error)
	})
	if !ok {
		return n, nil
	}
	m, err := c.running(ctx, planID)
	if err != nil {
		return 0, fmt.Errorf("bench: tasks running of plan %s: %w", planID, err)
	}
	return m, nil
}

// footprint is the process's live heap with its goroutines' stacks, and its goroutines.
type footprint struct {
	bytes      int64
	goroutines int
}

// footprintNow collects the garbage and reads the footprint.
func footprintNow() footprint {
	runtime.GC()
	s := []metrics.Sample{{Name: liveHeap}, {Name: stacks}}
	metrics.Read(s)
	var b int64
	for _, v := range s {
		if v.Value.Kind() == metrics.KindUint64 {
			b += int64(v.Value.Uint64())
		}
	}
	return footprint{bytes: b, goroutines: runtime.NumGoroutine()}
}
