package redisrepo_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/outage"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/infra/repotest"
	"github.com/executor-dev/executor/infra/roundtrips"
)

// saveBenchStages is the number of stages of the benchmark's tasks: the executor bench's
// default plan of 10 noop stages, so a task's hash and checkpoint have realistic sizes.
const saveBenchStages = 10

// saveBenchWorkers is how many runs write at once in the parallel variants: the orchestrator's
// default worker count (orchestrator.DefaultWorkers).
const saveBenchWorkers = 64

var saveBenchSpecs = repotest.NoopStages(saveBenchStages)

// saveBench is a Store on a private redis-server, over a client whose round trips are counted.
type saveBench struct {
	client *redis.Client
	trips  *roundtrips.Counter
	mon    *outage.Monitor
	store  *redisrepo.Store
}

// newSaveBench builds a store on srv; with autoPipeline, runs' commands go through the
// client's AutoPipeline (Options.Batched), as the server wires it.
func newSaveBench(b *testing.B, srv *redistest.Server, autoPipeline bool) *saveBench {
	b.Helper()
	client := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	b.Cleanup(func() { _ = client.Close() }) // closes the AutoPipeline too
	trips := &roundtrips.Counter{}
	client.AddHook(trips)
	logger := slog.New(slog.DiscardHandler)
	mon := outage.NewMonitor(logger)
	opts := redisrepo.Options{Monitor: mon, Logger: logger}
	if autoPipeline {
		ap, err := client.AutoPipeline()
		require.NoError(b, err)
		opts.Batched = ap
	}
	return &saveBench{client: client, trips: trips, mon: mon, store: redisrepo.New(client, opts)}
}

// benchRun is one started task with its checkpoint, as a run holds them.
type benchRun struct {
	tk *task.Task
	cp *checkpoint.Checkpoint
}

func (r *benchRun) done() bool { return r.tk.CurrentStage() == saveBenchStages }

// transition is one stage transition as the orchestrator commits it: the stage's attempt,
// the stage completed (and the task with its last stage), the checkpoint, one Save.
func (r *benchRun) transition(ctx context.Context, store *redisrepo.Store) error {
	i := r.tk.CurrentStage()
	now := time.Now().UTC().Truncate(time.Microsecond) // as the ledger keeps it
	err := repotest.CompleteStage(r.tk, r.cp, i, now)
	if err == nil && i == saveBenchStages-1 {
		err = r.tk.Complete(now.Add(time.Millisecond))
	}
	if err != nil {
		return err
	}
	return store.Tasks().Save(ctx, r.tk, r.cp)
}

// startRuns creates n tasks (plans of at most 1,000 tenants) and starts each as a run does
// (fence bump, Start, Save), many at once: RUNNING tasks at stage 0.
func (sb *saveBench) startRuns(b *testing.B, n int) []*benchRun {
	b.Helper()
	ctx := context.Background()
	var ids []string
	for len(ids) < n {
		now := time.Now().UTC()
		planID := ulid.Make().String()
		tasks := make([]*task.Task, min(1000, n-len(ids)))
		planTasks := make([]string, len(tasks))
		for i := range tasks {
			var err error
			tasks[i], err = task.New(planID, fmt.Sprintf("save-%s-%d", planID, i), map[string]any{"index": fmt.Sprint(i)}, saveBenchSpecs, now)
			require.NoError(b, err)
			planTasks[i] = tasks[i].ID()
		}
		p, err := plan.New(plan.Draft{ID: planID, Name: "save-bench", Stages: saveBenchSpecs, TaskIDs: planTasks}, now)
		require.NoError(b, err)
		require.NoError(b, sb.store.CreatePlan(ctx, p, tasks))
		ids = append(ids, planTasks...)
	}
	runs := make([]*benchRun, n)
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range saveBenchWorkers {
		wg.Go(func() {
			for i := range next {
				tk, err := sb.store.Tasks().BumpFence(ctx, ids[i])
				if err == nil {
					err = tk.Start(tk.Fence(), time.Now())
				}
				if err == nil {
					err = sb.store.Tasks().Save(ctx, tk, nil)
				}
				runs[i], errs[i] = &benchRun{tk: tk, cp: checkpoint.New(ids[i])}, err
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	require.NoError(b, errors.Join(errs...))
	return runs
}

// requireTransitions checks that Redis (read by a fresh store, with an empty mirror) holds
// runs with n stage transitions in all: every run with all its stages done COMPLETED, every
// other one RUNNING at the stage it got to; and that the store never fell back on memory.
func (sb *saveBench) requireTransitions(b *testing.B, runs []*benchRun, n int) {
	b.Helper()
	degraded, _ := sb.mon.Degraded()
	require.False(b, degraded, "Redis was away: writes went to memory")
	require.Zero(b, sb.store.JournalLen())
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.tk.ID()
	}
	stored, err := redisrepo.New(sb.client, redisrepo.Options{}).Tasks().ByIDs(context.Background(), ids)
	require.NoError(b, err)
	total := 0
	for i, tk := range stored {
		require.Equal(b, runs[i].tk.State(), tk.State(), "task %s as Redis holds it", tk.ID())
		want := task.Running
		if tk.CurrentStage() == saveBenchStages {
			want = task.Completed
		}
		require.Equal(b, want, tk.Status())
		total += tk.CurrentStage()
	}
	require.Equal(b, n, total, "stage transitions in Redis")
}

// reportTrips reports the round trips per stage transition.
func reportTrips(b *testing.B, trips int64) {
	b.ReportMetric(float64(trips)/float64(b.N), "roundtrips/op")
}

// BenchmarkSaveStageTransition measures one stage transition written through to a private
// redis-server: one attempt recorded, the stage completed (with its last stage, the task),
// the checkpoint recorded, and TaskRepo.Save (the fenced save_task.lua with only the changed
// fields; the last stage also releases the tenant). Tasks have 10 noop stages; they are
// created and started (fence bump, Start, Save) untimed, so one op is one Save of a stage
// transition, and roundtrips/op counts the round trips it took (1 per transition, plus the
// tenant release on every 10th).
//
//   - sequential: one run at a time, one round trip per command (Options.Batched unset).
//   - parallel-autopipeline: 64 runs at once, each driving its own tasks, on a store whose
//     runs' commands go through the client's AutoPipeline, as the server wires it: concurrent
//     runs share round trips, so roundtrips/op falls below 1.
//   - parallel-client: the same 64 runs on a store without AutoPipeline, for comparison.
func BenchmarkSaveStageTransition(b *testing.B) {
	srv := redistest.Start(b)

	b.Run("sequential", func(b *testing.B) {
		sb := newSaveBench(b, srv, false)
		ctx := context.Background()
		queue := sb.startRuns(b, 100)
		var used []*benchRun
		var cur *benchRun
		var setupTrips int64
		b.ReportAllocs()
		start := sb.trips.Count()
		for b.Loop() {
			if cur == nil || cur.done() {
				if len(queue) == 0 {
					b.StopTimer()
					before := sb.trips.Count()
					queue = sb.startRuns(b, 100)
					setupTrips += sb.trips.Count() - before
					b.StartTimer()
				}
				cur, queue = queue[0], queue[1:]
				used = append(used, cur)
			}
			require.NoError(b, cur.transition(ctx, sb.store))
		}
		b.StopTimer()
		reportTrips(b, sb.trips.Count()-start-setupTrips)
		sb.requireTransitions(b, used, b.N)
	})

	for _, bc := range []struct {
		name         string
		autoPipeline bool
	}{{"parallel-autopipeline", true}, {"parallel-client", false}} {
		b.Run(bc.name, func(b *testing.B) {
			sb := newSaveBench(b, srv, bc.autoPipeline)
			ctx := context.Background()
			perProc := max(1, saveBenchWorkers/runtime.GOMAXPROCS(0))
			goroutines := perProc * runtime.GOMAXPROCS(0)
			// Each goroutine leaves at most one task partly run: enough tasks for every op.
			runs := sb.startRuns(b, b.N/saveBenchStages+goroutines+1)
			queue := make(chan *benchRun, len(runs))
			for _, r := range runs {
				queue <- r
			}
			close(queue)
			var mu sync.Mutex
			var errs []error
			fail := func(err error) {
				mu.Lock()
				defer mu.Unlock()
				errs = append(errs, err)
			}
			b.SetParallelism(perProc)
			b.ReportAllocs()
			start := sb.trips.Count()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				var cur *benchRun
				for pb.Next() {
					if cur == nil || cur.done() {
						var ok bool
						if cur, ok = <-queue; !ok {
							fail(errors.New("out of started tasks"))
							return
						}
					}
					if err := cur.transition(ctx, sb.store); err != nil {
						fail(err)
						return
					}
				}
			})
			b.StopTimer()
			reportTrips(b, sb.trips.Count()-start)
			require.NoError(b, errors.Join(errs...))
			sb.requireTransitions(b, runs, b.N)
		})
	}
}
