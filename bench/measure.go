package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/executor-dev/executor/domain/plan"
)

// measurePlan runs the Tenants × Stages plan and returns its tenant ids. Around the plan phase
// (Submit to terminal) it reads the executor's CPU time and, when they apply, Redis's INFO and
// the round trips; INFO memory is read outside that bracket.
func measurePlan(ctx context.Context, r *runner, res *Result) ([]string, error) {
	cfg := r.cfg
	tenants := tenantIDs(r.tenantPrefix+"t", cfg.Tenants)
	var mem0 int64
	var red0 redisStats
	if r.redis != nil {
		var err error
		if mem0, err = usedMemory(ctx, r.redis); err != nil {
			return nil, err
		}
		if red0, err = readRedisStats(ctx, r.redis); err != nil {
			return nil, err
		}
	}
	cpu0, err := r.target.cpuTime(ctx)
	if err != nil {
		return nil, err
	}
	rt0 := r.roundTrips()
	start := time.Now()
	sub := submission{name: "bench-transitions", stages: cfg.Stages, tenants: tenants, concurrency: cfg.Concurrency,
		stageDuration: cfg.StageDuration}
	id, err := r.target.submit(ctx, sub)
	if err != nil {
		return nil, fmt.Errorf("bench: submit %s: %w", sub.name, err)
	}
	var during *rollout
	if cfg.StageDuration > 0 { // the tenants exist from here on
		during = startRollout(ctx, r, tenants, res)
	}
	err = waitCompleted(ctx, r.target, id)
	elapsed := time.Since(start)
	if during != nil {
		err = errors.Join(err, during.stop(elapsed, res))
	}
	if err != nil {
		return nil, err
	}
	rt := r.roundTrips() - rt0
	cpu1, err := r.target.cpuTime(ctx)
	if err != nil {
		return nil, err
	}

	secs := elapsed.Seconds()
	res.Transitions = cfg.Tenants * cfg.Stages
	res.PlanMs = ms(elapsed)
	res.TransitionsPerSec = float64(res.Transitions) / secs
	res.TasksPerSec = float64(cfg.Tenants) / secs
	res.ExecutorCPUUsPerTransition = us(cpu1-cpu0) / float64(res.Transitions)
	if len(r.rts) > 0 {
		res.RoundTrips = rt
		res.RoundTripsPerTransition = float64(rt) / float64(res.Transitions)
	}
	if r.redis != nil {
		red1, err := readRedisStats(ctx, r.redis)
		if err != nil {
			return nil, err
		}
		mem1, err := usedMemory(ctx, r.redis)
		if err != nil {
			return nil, err
		}
		red1.since(red0, res)
		res.RedisBytesPerTask = float64(mem1-mem0) / float64(cfg.Tenants)
	}
	return tenants, nil
}

// measureAccept times the Submit of an AcceptTenants-tenant plan of one noop stage, then waits
// for that plan to end so that it does not load the queries.
func measureAccept(ctx context.Context, r *runner, res *Result) error {
	sub := submission{name: "bench-accept", stages: 1, tenants: tenantIDs(r.tenantPrefix+"a", r.cfg.AcceptTenants), concurrency: r.cfg.Concurrency}
	start := time.Now()
	id, err := r.target.submit(ctx, sub)
	if err != nil {
		return fmt.Errorf("bench: submit the accept plan: %w", err)
	}
	res.AcceptMs = ms(time.Since(start))
	return waitCompleted(ctx, r.target, id)
}

// measureQueries runs QueryRate tenant queries per second on random tenants for QueryDuration.
func measureQueries(ctx context.Context, r *runner, tenants []string, res *Result) error {
	qctx, cancel := context.WithTimeout(ctx, r.cfg.QueryDuration)
	defer cancel()
	return queryUntil(ctx, qctx, r, tenants, res)
}

// queryUntil runs QueryRate tenant queries per second on random tenants until until is done,
// each query on ctx, and sets the results.
func queryUntil(ctx, until context.Context, r *runner, tenants []string, res *Result) error {
	cfg := r.cfg
	g := min(queryGoroutines, cfg.QueryRate)
	interval := time.Duration(float64(time.Second) * float64(g) / float64(cfg.QueryRate))
	qctx := until
	lat := make([][]time.Duration, g)
	errs := make([]int, g)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range g {
		wg.Go(func() {
			tick := time.NewTicker(interval)
			defer tick.Stop()
			for first := true; ; first = false {
				if !first {
					select {
					case <-qctx.Done():
						return
					case <-tick.C:
					}
				}
				tenant := tenants[rand.IntN(len(tenants))]
				t0 := time.Now()
				err := r.target.tenantTask(ctx, tenant)
				d := time.Since(t0)
				if err != nil {
					errs[i]++
					continue
				}
				lat[i] = append(lat[i], d)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(lat...)
	for _, n := range errs {
		res.QueryErrors += n
	}
	res.Queries = len(all) + res.QueryErrors
	res.QueryRateGot = float64(res.Queries) / elapsed.Seconds()
	if len(all) == 0 {
		return fmt.Errorf("bench: no tenant query succeeded (%d failed)", res.QueryErrors)
	}
	slices.Sort(all)
	res.QueryP50Ms = ms(percentile(all, 0.50))
	res.QueryP99Ms = ms(percentile(all, 0.99))
	return nil
}

// waitCompleted waits until the plan is terminal and fails unless it completed.
func waitCompleted(ctx context.Context, t target, planID string) error {
	for {
		st, err := t.waitPlan(ctx, planID)
		if err != nil {
			return fmt.Errorf("bench: wait for plan %s: %w", planID, err)
		}
		switch {
		case st == plan.Completed:
			return nil
		case st.Terminal():
			return fmt.Errorf("bench: plan %s ended %s, not %s", planID, st, plan.Completed)
		}
	}
}

func tenantIDs(prefix string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s%07d", prefix, i)
	}
	return ids
}

// percentile returns the q-quantile of sorted (nearest rank).
func percentile(sorted []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
