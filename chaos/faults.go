//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FaultKind names a fault.
type FaultKind string

// The faults, injected one at a time.
const (
	// FaultRedisRestart: kill -9 of Redis, restarted empty a second later (it persists nothing).
	FaultRedisRestart FaultKind = "redis-kill-restart"
	// FaultRedisFreeze: SIGSTOP of Redis for two lease TTLs, then SIGCONT.
	FaultRedisFreeze FaultKind = "redis-sigstop"
	// FaultRedisOOM: Redis out of memory (maxmemory 1 byte, noeviction: every write refused
	// with OOM) for a few seconds, then maxmemory 0 again.
	FaultRedisOOM FaultKind = "redis-oom"
	// FaultConnResets: one executor's proxy drops connections, loses replies and delivers
	// requests late for a few seconds.
	FaultConnResets FaultKind = "conn-resets"
	// FaultConnCut: one executor's proxy cuts it off Redis for two lease TTLs.
	FaultConnCut FaultKind = "conn-cut"
	// FaultConnBlackHole: one executor's proxy black-holes it (connections stay open, nothing
	// gets through either way, as behind a dropped route) for two lease TTLs, then restores.
	FaultConnBlackHole FaultKind = "conn-blackhole"
	// FaultConnLatency: one executor's proxy delays every request to Redis by a third of the
	// lease TTL (below the executor's Redis client timeout, half the TTL: slow, not away) for
	// 8–15 s. Nothing may be judged INTERRUPTED for it (checkLatency).
	FaultConnLatency FaultKind = "conn-latency"
	// FaultExecFreeze: SIGSTOP of one executor for two lease TTLs, then SIGCONT.
	FaultExecFreeze FaultKind = "executor-sigstop"
	// FaultExecKill: kill -9 of one executor, started again under its name after a lease TTL.
	FaultExecKill FaultKind = "executor-kill"
)

// AllFaults lists every fault kind.
var AllFaults = []FaultKind{FaultRedisRestart, FaultRedisFreeze, FaultRedisOOM, FaultConnResets,
	FaultConnCut, FaultConnBlackHole, FaultConnLatency, FaultExecFreeze, FaultExecKill}

// DefaultFaults are the faults a run injects when CHAOS_FAULTS names none: all of them.
var DefaultFaults = AllFaults

// EnvFaults restricts the faults injected to a comma-separated list of kinds.
const EnvFaults = "CHAOS_FAULTS"

// ParseFaults reads a comma-separated list of fault kinds; empty means DefaultFaults.
func ParseFaults(s string) ([]FaultKind, error) {
	if strings.TrimSpace(s) == "" {
		return DefaultFaults, nil
	}
	var out []FaultKind
	for _, f := range strings.Split(s, ",") {
		k := FaultKind(strings.TrimSpace(f))
		found := false
		for _, known := range AllFaults {
			found = found || known == k
		}
		if !found {
			return nil, fmt.Errorf("%s: unknown fault %q (known: %v)", EnvFaults, k, AllFaults)
		}
		out = append(out, k)
	}
	return out, nil
}

// Injector injects the faults one at a time, cycling through kinds in an order shuffled
// afresh every cycle.
type Injector struct {
	c        *Cluster
	hist     *History
	rng      *Rand
	kinds    []FaultKind
	busy     func() map[string]int // executor → tasks it runs, as the workload last saw them
	picked   int                   // the tasks the last executor picked ran, as seen
	order    []FaultKind
	lastKill time.Time // the end of the last executor-kill
	lastEnd  time.Time // the end of the last fault
	// quietUntil: the next fault waits until then (a conn-latency's end + a lease TTL, so
	// that a run alive when the next fault begins beat after the latency ended: checkLatency).
	quietUntil time.Time
}

// killThenLossGap is how long after an executor's kill -9 the injector waits before Redis
// loses its data (redis-kill-restart). Once Redis lost its data, the executors' memory is the
// only copy of what it held; a killed executor restarts with nothing, so what only it held
// (the end of a task it ran, which the executor that accepted the plan holds PENDING) is
// lost or stale then. That double fault is outside what the executor promises
// (docs/degraded.md, "What is not covered": run Redis with persistence against it), so the
// suite spaces the two faults beyond the life of the plans the killed executor ran.
const killThenLossGap = 30 * time.Second

// latencyQuiet is how long after the previous fault's end a conn-latency waits to begin: 2
// lease TTLs and a heartbeat period (TTL/3). A run lost to the previous fault stops at its
// lease deadline, at most TTL − TTL/5 after its last confirmed refresh, so its last heartbeat is
// older than the previous fault's end + 1 TTL (2 TTLs leave room for a run stopped when its
// executor notices a data loss); a run alive when the latency begins beat within a heartbeat
// period before it, so later than the previous fault's end + 2 TTLs. checkLatency tells the two
// apart by that heartbeat (latencyGuard).
func latencyQuiet(ttl time.Duration) time.Duration { return 2*ttl + ttl/3 }

// latencyOf is the conn-latency's delay for a lease TTL: a third of it, below the executor's
// Redis client timeout in the shared topology (half the TTL, within 1–5 s), so that a
// request is slow but answered.
func latencyOf(ttl time.Duration) time.Duration { return ttl / 3 }

// freezeOf is how long the freezes (redis-sigstop, executor-sigstop) and the partitions
// (conn-cut, conn-blackhole) last: two lease TTLs, past the leases, so that another executor
// judges the runs cut off lost meanwhile.
func freezeOf(ttl time.Duration) time.Duration { return 2 * ttl }

// NewInjector returns an injector of kinds. busy, when not nil, names the executors running
// tasks now (as the workload last saw them).
func NewInjector(c *Cluster, hist *History, rng *Rand, kinds []FaultKind, busy func() map[string]int) *Injector {
	return &Injector{c: c, hist: hist, rng: rng, kinds: kinds, busy: busy}
}

// pick returns the executor a fault hits: a random one of those up that run tasks (as the
// workload last saw them), so that the fault meets runs in flight; a random one that is up
// when none does.
func (in *Injector) pick() *Executor {
	if in.busy != nil {
		running := in.busy()
		var busy []*Executor
		for _, e := range in.c.Executors {
			if e.Up() && running[e.Name] > 0 {
				busy = append(busy, e)
			}
		}
		if len(busy) > 0 {
			e := busy[in.rng.Intn(len(busy))]
			in.picked = running[e.Name]
			return e
		}
	}
	in.picked = 0
	return in.c.Pick(in.rng)
}

// Next returns the next fault kind to inject.
func (in *Injector) Next() FaultKind {
	if len(in.order) == 0 {
		for _, i := range in.rng.Perm(len(in.kinds)) {
			in.order = append(in.order, in.kinds[i])
		}
	}
	if in.order[0] == FaultRedisRestart && time.Since(in.lastKill) < killThenLossGap {
		for i, k := range in.order {
			if k != FaultRedisRestart { // another fault first: the data loss waits (Inject)
				in.order[0], in.order[i] = in.order[i], in.order[0]
				break
			}
		}
	}
	k := in.order[0]
	in.order = in.order[1:]
	return k
}

// Inject injects one fault of kind and returns once it is over (Redis answers again, the
// executor runs again, the proxy passes again); it records the fault. It must run on the
// test's goroutine (redistest fails the test from there).
func (in *Injector) Inject(t *testing.T, kind FaultKind) FaultRecord {
	t.Helper()
	ttl := in.c.cfg.LeaseTTL
	if wait := time.Until(in.quietUntil); wait > 0 {
		time.Sleep(wait)
	}
	f := FaultRecord{Kind: kind, Target: "redis", Start: time.Now()}
	switch kind {
	case FaultRedisRestart:
		if wait := killThenLossGap - time.Since(in.lastKill); wait > 0 {
			time.Sleep(wait)
			f.Start = time.Now()
		}
		in.c.Redis.Kill()
		f.Note = "redis down 1s"
		time.Sleep(time.Second)
		in.c.Redis.Restart()
	case FaultRedisFreeze:
		in.c.Redis.Freeze()
		time.Sleep(freezeOf(ttl))
		in.c.Redis.Thaw()
	case FaultRedisOOM:
		hold := in.hold(4*time.Second, 7*time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		require.NoError(t, in.c.RDB.ConfigSet(ctx, "maxmemory", "1").Err(), "OOM on")
		cancel()
		f.Note = fmt.Sprintf("maxmemory 1 for %s", hold)
		time.Sleep(hold)
		ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
		require.NoError(t, in.c.RDB.ConfigSet(ctx, "maxmemory", "0").Err(), "OOM off")
		cancel()
	case FaultConnResets, FaultConnCut, FaultConnBlackHole, FaultConnLatency:
		in.injectProxy(t, kind, &f)
	case FaultExecFreeze:
		e := in.pick()
		f.Target = e.Name
		require.NoError(t, in.c.Freeze(e))
		require.Greater(t, freezeOf(ttl), ttl, "the freeze outlasts the lease")
		time.Sleep(freezeOf(ttl))
		require.NoError(t, in.c.Thaw(e))
	case FaultExecKill:
		e := in.pick()
		f.Target = e.Name
		require.NoError(t, in.c.Kill(e))
		// Its liveness key expires within a lease TTL: then the name is free again.
		time.Sleep(ttl + time.Second)
		require.NoError(t, in.c.Start(e), "%s starts again", e.Name)
		in.lastKill = time.Now()
	default:
		require.FailNow(t, "unknown fault", "%q", kind)
	}
	f.End = time.Now()
	if f.Target != "redis" {
		f.Note = strings.TrimSuffix(fmt.Sprintf("%d tasks seen running on it; %s", in.picked, f.Note), "; ")
	}
	in.lastEnd = f.End
	in.hist.AddFault(f)
	in.hist.Notef("fault %s on %s: %s → %s %s", f.Kind, f.Target, f.Start.Format("15:04:05.000"), f.End.Format("15:04:05.000"), f.Note)
	return f
}

// injectProxy injects a fault of one executor's proxy (conn-*) into f, which it completes
// with the executor's name and what the fault did.
func (in *Injector) injectProxy(t *testing.T, kind FaultKind, f *FaultRecord) {
	t.Helper()
	ttl := in.c.cfg.LeaseTTL
	switch kind {
	case FaultConnResets:
		e := in.pick()
		f.Target = e.Name
		before := e.Proxy.Stats()
		e.Proxy.Inject(true)
		time.Sleep(in.hold(4*time.Second, 8*time.Second))
		e.Proxy.Inject(false)
		after := e.Proxy.Stats()
		f.Note = fmt.Sprintf("%d chunks: %d dropped, %d replies lost, %d delayed late",
			after.Chunks-before.Chunks, after.Dropped-before.Dropped, after.RepliesLost-before.RepliesLost, after.Delayed-before.Delayed)
	case FaultConnCut:
		e := in.pick()
		f.Target = e.Name
		e.Proxy.Cut()
		time.Sleep(freezeOf(ttl))
		e.Proxy.Restore()
	case FaultConnBlackHole:
		e := in.pick()
		f.Target = e.Name
		before := e.Proxy.Stats()
		e.Proxy.BlackHole()
		time.Sleep(freezeOf(ttl))
		e.Proxy.Restore()
		f.Note = fmt.Sprintf("%d chunks black-holed", e.Proxy.Stats().BlackHoled-before.BlackHoled)
	case FaultConnLatency:
		lat := latencyOf(ttl)
		require.Less(t, lat, ttl/2, "the latency stays below the executor's Redis client timeout (TTL/2)")
		if wait := latencyQuiet(ttl) - time.Since(in.lastEnd); wait > 0 {
			time.Sleep(wait) // the previous fault's lost runs have stopped beating: checkLatency
			f.Start = time.Now()
		}
		e := in.pick()
		f.Target = e.Name
		hold := in.hold(8*time.Second, 15*time.Second)
		before := e.Proxy.Stats()
		e.Proxy.SetLatency(lat)
		time.Sleep(hold)
		e.Proxy.SetLatency(0)
		in.quietUntil = time.Now().Add(ttl)
		f.Note = fmt.Sprintf("latency %s for %s: %d request chunks delayed", lat, hold.Round(time.Millisecond), e.Proxy.Stats().Lagged-before.Lagged)
	}
}

func (in *Injector) hold(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(in.rng.Float64()*float64(hi-lo))
}
