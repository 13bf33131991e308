//go:build chaos

package chaos

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Run runs one chaos run with cfg against the executor binary bin and returns its report:
// the cluster and the workload start, faults are injected one at a time for cfg.Duration
// (each followed by a wait until every executor is ready again and a pause), then the
// workload stops, the SRE recovers every plan (bounded by cfg.Settle), and the final state is
// read and checked. It fails t only for what keeps the run from going on; the caller asserts
// the figures. The executors' logs, the history and the report are written to a directory
// kept when t failed (or with CHAOS_KEEP=1), whose path is logged.
func Run(t *testing.T, cfg Config, bin string) Report {
	t.Helper()
	kinds, err := ParseFaults(os.Getenv(EnvFaults))
	if err != nil {
		t.Fatal(err)
	}
	dir := artifactsDir(t, cfg)

	hist := NewHistory()
	rng := NewRand(cfg.Seed)
	tg := StartTarget(t, rng, cfg.FailRate)
	c := StartCluster(t, cfg, bin, dir, hist, rng)
	api := NewAPI(hist)
	w := NewWorkload(c, api, tg, hist, rng, cfg)
	op := NewOperator(c, api, hist, rng, w)
	// The SRE on call while faults are injected: its own source, seeded from the run's seed.
	watch := NewOperator(c, api, hist, NewRand(cfg.Seed^watchSeed), w)
	in := NewInjector(c, hist, rng, kinds, w.RunningOn)
	hist.Notef("run starts: seed %d, %s, %d executors (lease TTL %s), faults %v", cfg.Seed, cfg.Duration, cfg.Executors, cfg.LeaseTTL, kinds)

	dur := injectFaults(t, cfg, c, w, watch, in, hist, rng)
	recovery := recoverCluster(t, cfg, c, op, tg)

	ids := op.AllPlans(context.Background())
	known := map[string][]string{}
	for _, p := range w.Plans() {
		for id := range p.Tasks {
			known[p.ID] = append(known[p.ID], id)
		}
	}
	snap, err := TakeSnapshot(context.Background(), c, api, ids, known)
	if err != nil {
		t.Errorf("snapshot: %v", err)
	}
	h := hist.Copy()
	maxIF, maxTenant := tg.MaxInFlightPerTenant()
	calls := tg.Calls()
	res := Check(Evidence{History: h, Calls: calls, Overlaps: tg.Overlaps(), MaxInFlight: maxIF, MaxInFlightTenant: maxTenant,
		Plans: w.Plans(), Snapshot: snap, Grace: cfg.Grace, LogAlarms: ScanLogs(dir), Reaps: ScanReaps(dir), LeaseTTL: cfg.LeaseTTL})
	rep := NewReport(cfg, dur, recovery, h, calls, snap, res)
	_ = os.WriteFile(filepath.Join(dir, "report.txt"), []byte(rep.String()+"\n"+rep.Timeline()), 0o600)
	if err := hist.WriteJSON(filepath.Join(dir, "history.json"), map[string]any{"calls": calls}); err != nil {
		t.Logf("history.json: %v", err)
	}
	return rep
}

// artifactsDir makes the directory of the run's executor logs, history and report, removed
// after a green run unless cfg.KeepLogs.
func artifactsDir(t *testing.T, cfg Config) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "chaos-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() || cfg.KeepLogs {
			t.Logf("chaos artifacts (executor logs, history.json, report.txt) kept in %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	return dir
}

// watchSeed derives the seed of the operator acting during faults from the run's.
const watchSeed = 0x5ae

// injectFaults runs the workload and the operator on call (watch) for cfg.Duration, injecting
// one fault at a time and waiting for the cluster to be ready after each, and returns how long
// it ran.
func injectFaults(t *testing.T, cfg Config, c *Cluster, w *Workload, watch *Operator, in *Injector, hist *History, rng *Rand) time.Duration {
	t.Helper()
	w.Start()
	t.Cleanup(w.Stop)
	wctx, stopWatch := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		watch.Watch(wctx)
	}()
	endWatch := func() {
		stopWatch()
		<-watched
	}
	t.Cleanup(endWatch)
	start := time.Now()
	end := start.Add(cfg.Duration)
	time.Sleep(min(3*time.Second, cfg.Duration/4)) // the first plans get going
	for time.Now().Before(end) {
		kind := in.Next()
		in.Inject(t, kind)
		if err := c.WaitReady(context.Background(), 60*time.Second); err != nil {
			hist.Notef("after %s: %v", kind, err)
			t.Errorf("after %s: %v", kind, err)
		}
		if left := time.Until(end); left > 0 {
			time.Sleep(min(rng.Jitter(3*time.Second), left))
		}
	}
	endWatch()
	w.Stop()
	dur := time.Since(start)
	hist.Notef("faults and workload stopped after %s", dur.Round(time.Millisecond))
	return dur
}

// recoverCluster recovers as an SRE would, every executor up and reaching Redis, waits for
// the target's calls in flight and a lease TTL for late writes (a run's last write-back, a
// reaper) before the final read, and returns how long the recovery took.
func recoverCluster(t *testing.T, cfg Config, c *Cluster, op *Operator, tg *Target) time.Duration {
	t.Helper()
	recoverStart := time.Now()
	if err := c.WaitReady(context.Background(), 90*time.Second); err != nil {
		t.Errorf("before the recovery: %v", err)
	}
	if open := op.Recover(context.Background(), cfg.Settle); len(open) > 0 {
		t.Logf("recovery: %d plans still open after %s", len(open), cfg.Settle)
	}
	recovery := time.Since(recoverStart)
	deadline := time.Now().Add(15 * time.Second)
	for tg.InFlight() > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(cfg.LeaseTTL)
	return recovery
}
