package lock

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/domain/lease"
	"github.com/executor-dev/executor/infra/outage"
)

// Failover is the tenant locker of degraded mode (docs/design.md §6): Redis leases while Redis
// answers, in-process leases while it does not, and never a run stopped merely because
// Redis is unreachable.
//
// Every lease is first an in-process (Memory) lease, so two runs of this process never share
// a tenant whatever Redis does. On top of it, the lease holds the tenant's Redis key (as the
// Redis locker does: Keys.TenantLock, redislock token followed by the owner) whenever Redis
// lets it. A lease taken while Redis is away is a degraded lease, on memory alone; its
// watchdog re-takes the Redis key as soon as Redis answers. A Redis-backed lease whose key
// vanished (a restarted, emptied Redis) re-takes it with the same value, unless a force
// release (ForceRelease, of any process) removed it and left its tombstone. The lease is
// lost only when Redis answers that another run holds the tenant, or that it was
// force-released.
//
// Failover reports connectivity errors to the outage monitor (Fail) and asks it whether to
// try Redis at all (Degraded); recovering the monitor is the store's business.
//
// With RedisOptions.SelfFence (executors sharing the Redis) nothing of that is on memory
// alone: a lease is taken on Redis or not at all, and it is lost at its Deadline unless Redis
// confirmed a refresh (or a take-back) before; a take-back is never tried past it.
type Failover struct {
	redis     *Redis
	mem       *Memory
	mon       *outage.Monitor
	selfFence bool
}

var _ interface {
	Acquire(context.Context, string, string) (lease.Lease, error)
	Holder(context.Context, string) (lease.Holder, bool, error)
} = (*Failover)(nil)

// NewFailover returns a failover locker on client, with opts as for NewRedis, reporting
// Redis outages to mon (nil means a private monitor). The client is not closed by the
// locker.
func NewFailover(client redis.UniversalClient, opts RedisOptions, mon *outage.Monitor) *Failover {
	r := NewRedis(client, opts)
	if mon == nil {
		mon = outage.NewMonitor(r.log)
	}
	return &Failover{redis: r, mem: NewMemory(), mon: mon, selfFence: opts.SelfFence}
}

// TTL returns the Redis lease TTL the locker uses; its leases' watchdogs tick every TTL/3 (TTL/10
// with SelfFence: interval).
func (f *Failover) TTL() time.Duration { return f.redis.ttl }

// Acquire takes tenantID's lease for owner (the run's <planId>:<taskId>) without waiting.
//
// It first takes the in-process lease: a tenant held by another run of this process gives
// an error wrapping lease.ErrHeld. Then, unless the monitor says Redis is down, it takes the
// Redis key: another holder gives an error wrapping lease.ErrHeld; a connectivity error is
// reported to the monitor and the lease goes on as a degraded lease, on memory alone, until
// its watchdog can re-take the key; any other error fails the acquisition.
func (f *Failover) Acquire(ctx context.Context, tenantID, owner string) (lease.Lease, error) {
	mem, err := f.mem.Acquire(ctx, tenantID, owner)
	if err != nil {
		if errors.Is(err, lease.ErrHeld) {
			return nil, err // already "lock: <tenant> held by <owner>: ..."
		}
		return nil, fmt.Errorf("lock: acquire tenant %s: %w", tenantID, err)
	}
	key := f.redis.keys.TenantLock(tenantID)
	log := f.redis.log.With("tenant", tenantID, "owner", owner, "key", key)

	var lk *redislock.Lock
	sent := time.Now() // the key's TTL starts after this instant
	if down, _ := f.mon.Degraded(); down && !f.selfFence {
		log.Debug("lock: lease taken on memory: running degraded")
	} else {
		lk, err = f.redis.obtain(ctx, key, "", owner)
		switch {
		case err == nil:
			f.redis.warm(ctx, lk)
		case errors.Is(err, redislock.ErrNotObtained):
			_ = mem.Release(ctx)
			return nil, f.redis.heldError(ctx, tenantID)
		case f.selfFence:
			_ = mem.Release(ctx)
			f.mon.Fail(err)
			return nil, fmt.Errorf("lock: acquire tenant %s: %w", tenantID, err)
		case ctx.Err() == nil && f.mon.Fail(err):
			// The caller's own deadline is not an outage; a refused or silent Redis is.
			log.Debug("lock: lease taken on memory: Redis unreachable", "error", err)
		default:
			_ = mem.Release(ctx)
			return nil, fmt.Errorf("lock: acquire tenant %s: %w", tenantID, err)
		}
	}

	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l := &FailoverLease{
		f:      f,
		tenant: tenantID,
		owner:  owner,
		key:    key,
		mem:    mem,
		log:    log,
		cancel: cancel,
		lost:   newLoss(),
		done:   make(chan struct{}),
		rlock:  lk,
	}
	if !f.selfFence {
		go l.watch(wctx)
		return l, nil
	}
	// A self-fencing lease has nothing to watch before its first refresh is due (an interval
	// after the acquisition was sent; its deadline is far later): its watchdog starts then,
	// or at once when the in-process lease is force-released (wake), and a run shorter than
	// that never has one. Release stops it from starting.
	l.deadline.confirmed(sent, f.redis.ttl)
	l.idle = time.AfterFunc(max(time.Until(sent.Add(f.interval())), 0), func() { l.watch(wctx) })
	mem.AfterLost(func() { l.wake(wctx) })
	return l, nil
}

// wake starts the watchdog of a self-fencing lease at once, unless it has started or the
// lease was released: the in-process lease was force-released, which the watchdog turns into
// the lease's loss.
func (l *FailoverLease) wake(wctx context.Context) {
	if l.idle.Stop() {
		go l.watch(wctx)
	}
}

// Holder reports who holds tenantID's lease. While the monitor says Redis is down it is the
// in-process answer. Otherwise it is Redis's answer (owner after the token, PTTL), falling
// back to the in-process answer when Redis says nobody holds the tenant but a degraded
// lease of this process does (its watchdog has not re-taken the key yet); a connectivity
// error is reported to the monitor and answered from memory.
func (f *Failover) Holder(ctx context.Context, tenantID string) (lease.Holder, bool, error) {
	if down, _ := f.mon.Degraded(); down {
		return f.mem.Holder(ctx, tenantID)
	}
	h, held, err := f.redis.Holder(ctx, tenantID)
	switch {
	case err == nil && held:
		return h, true, nil
	case err == nil, ctx.Err() == nil && f.mon.Fail(err):
		return f.mem.Holder(ctx, tenantID)
	default:
		return lease.Holder{}, false, err // already "lock: holder of tenant ...: %w"
	}
}

// FailoverLease is a lease held in a Failover locker: an in-process lease, plus the
// tenant's Redis key whenever Redis lets it hold it. One watchdog goroutine ticks every
// TTL/3 until Release or loss (a self-fencing lease's starts only when its first refresh is
// due: see Acquire); each tick runs one Redis step in a goroutine of its own (at most one in
// flight), so that a Redis that does not answer never stalls the watchdog:
//
//   - holding the key, the step refreshes it. A refresh that finds the key gone re-takes it
//     with the same value (token and owner), in one script that first looks for the key's
//     tombstone (Keys.TenantLockReleased): holding this value, it says that a force release
//     of another process removed the key, and the lease is lost (its in-process lease freed)
//     instead. A key held by another value loses the lease.
//   - holding no key (degraded), the step tries to take it with a fresh token. A key held
//     by another owner loses the lease; a leftover key of the same owner (an earlier run of
//     the same task, released while Redis was away) is waited for until it expires, and
//     loses the lease only if it is kept alive past its PTTL or replaced.
//
// Connectivity errors, and a step still unanswered after TTL/3, are reported to the outage
// monitor and retried at the next tick: an unreachable Redis never loses the lease.
//
// Failover.ForceRelease takes the in-process lease away: the watchdog sees it at once, loses
// the lease and stops; it no longer refreshes or re-takes the key.
type FailoverLease struct {
	f      *Failover
	tenant string
	owner  string
	key    string
	mem    lease.Lease
	log    *slog.Logger

	cancel context.CancelFunc // stops the watchdog
	lost   *loss              // fired by the watchdog, at most once, when the lease is lost
	done   chan struct{}      // closed, under mu, when the watchdog and its step have returned
	// idle starts a self-fencing lease's watchdog when its first refresh is due (nil: the
	// watchdog started with the lease). Whoever stops it before it fires (Release, wake)
	// owns what the watchdog would have done.
	idle *time.Timer

	// rlock is the Redis lock the lease holds, nil while degraded or once lost. Only the
	// watchdog uses it until done is closed; only finish (under mu) after.
	rlock *redislock.Lock

	mu        sync.Mutex
	released  bool // finish has run
	abandoned bool // a Release gave up waiting: the watchdog finishes the release on exit

	deadline deadline // with SelfFence: see Deadline
}

// Deadline is, with RedisOptions.SelfFence, when the lease counts itself gone unless Redis
// confirms a refresh before (Lost closes then); the zero time without it (the lease goes on
// on memory while Redis is away).
func (l *FailoverLease) Deadline() time.Time {
	if !l.f.selfFence {
		return time.Time{}
	}
	return l.deadline.get()
}

// pastDeadline reports whether a self-fencing lease's deadline has passed.
func (l *FailoverLease) pastDeadline() bool {
	return l.f.selfFence && !time.Now().Before(l.deadline.get())
}

//go:embed scripts/take_back.lua
var takeBackSrc string

// takeBackScript re-creates a lease key with its own value, unless the key's tombstone says
// a force release removed that value, atomically.
var takeBackScript = redis.NewScript(takeBackSrc)

// The answers of takeBackScript.
const (
	takenBack  = "taken"    // the key holds the lease's value again, with a fresh TTL
	tombstoned = "released" // a force release removed the lease's value: the lease is lost
	heldByNext = "held"     // another value holds the key
	movedOn    = "moved"    // the key is gone and another task holds the tenant
)

// takeBack runs takeBackScript for tenantID's key and the lease value val of owner, and
// returns its answer: takenBack, tombstoned or heldByNext. Errors are Redis's, unwrapped, or a
// reply of an unexpected shape.
func (r *Redis) takeBack(ctx context.Context, tenantID, owner, val string) (string, error) {
	keys := []string{r.keys.TenantLock(tenantID), r.keys.TenantLockReleased(tenantID), r.keys.TenantActive(tenantID)}
	reply, err := takeBackScript.Run(ctx, r.client, keys, val, r.ttl.Milliseconds(), ownerTask(owner)).Text()
	if err != nil {
		return "", err
	}
	switch reply {
	case takenBack, tombstoned, heldByNext, movedOn:
		return reply, nil
	default:
		return "", fmt.Errorf("unexpected reply %q", reply)
	}
}

// ownerTask is the task id in a run's owner, "<planId>:<taskId>" (and "@<executor>" after
// it), or "" when the owner has no such form.
func ownerTask(owner string) string {
	owner, _, _ = strings.Cut(owner, "@")
	if _, id, ok := strings.Cut(owner, ":"); ok {
		return id
	}
	return ""
}

// Lost is closed when Redis answers that another run holds the tenant before Release, at
// once when Failover.ForceRelease of this process removes the lease, or at the watchdog's
// next tick when a force release of another process (Failover or Redis ForceRelease) removed
// its key and left the tombstone of its value; the run holding the lease must stop. When
// another run took the key, the in-process lease stays held until Release, so no other run
// of this process takes the tenant before this one has stopped; a force release, of this
// process or another, frees both.
func (l *FailoverLease) Lost() <-chan struct{} { return l.lost.lost() }

// AfterLost runs f once the lease is lost (see lease.Lease, and Lost for when).
func (l *FailoverLease) AfterLost(f func()) (stop func() bool) { return l.lost.after(f) }

// Release stops the watchdog, waits for it to return, deletes the Redis key if the lease
// holds it, and frees the in-process lease. A key already gone, or a Redis that does not
// answer within TTL/3, is not a failure: the key expires by itself after the TTL. Releasing a lost or a
// released lease is not an error, and Release is safe to call concurrently, with itself and
// with loss.
//
// If ctx ends while the watchdog is still waiting for Redis (a client that ignores context
// deadlines on a frozen server), Release returns ctx's error and the watchdog completes the
// release as soon as its call returns.
func (l *FailoverLease) Release(ctx context.Context) error {
	l.cancel()
	if l.idle != nil && l.idle.Stop() { // the watchdog never started: nothing to wait for
		l.mu.Lock()
		defer l.mu.Unlock()
		close(l.done)
		return l.finish(ctx)
	}
	select {
	case <-l.done:
	case <-ctx.Done():
		l.mu.Lock()
		select {
		case <-l.done: // the watchdog returned meanwhile without seeing abandoned
			l.mu.Unlock()
		default:
			l.abandoned = true
			l.mu.Unlock()
			return fmt.Errorf("lock: release tenant %s: %w (finishing when Redis answers)", l.tenant, ctx.Err())
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.finish(ctx)
}

// finish deletes the Redis key if the lease still holds it and frees the in-process lease,
// once; l.mu must be held and the watchdog must have stopped.
func (l *FailoverLease) finish(ctx context.Context) error {
	if l.released {
		return nil
	}
	l.released = true
	var err error
	if l.rlock != nil {
		// Bounded like a watchdog step: a Redis that does not answer soon lets the key expire.
		rctx, cancel := context.WithTimeout(ctx, l.f.redis.ttl/3)
		rerr := l.rlock.Release(rctx)
		cancel()
		switch {
		case rerr == nil:
		case errors.Is(rerr, redislock.ErrLockNotHeld):
			l.log.Debug("lock: release: the key was already gone or taken")
		case ctx.Err() == nil && l.f.mon.Fail(rerr):
			l.log.Debug("lock: release: Redis unreachable; the key expires by itself", "error", rerr)
		default:
			err = fmt.Errorf("lock: release tenant %s: %w", l.tenant, rerr)
		}
		l.rlock = nil
	}
	_ = l.mem.Release(ctx) // never fails
	return err
}

// stepResult is the outcome of one watchdog step.
type stepResult struct {
	lock  *redislock.Lock // the Redis lock held after the step; nil when none
	other string          // the value of a key another token holds, when that stopped the step
	left  time.Duration   // other's time left; 0 when it never expires
	// expires is when other expires (with left > 0), between earliest and latest: its time
	// left counted from before and from after the read that found it.
	expires struct{ earliest, latest time.Time }
	err     error // a failure that changed nothing; retried at the next tick
	// released: a force release removed the key, and its tombstone holds the lease's value.
	released bool
	// movedOn: the key was gone and the tenant's active marker names another task (a new
	// plan claimed the tenant after Redis lost the lease): the lease is lost.
	movedOn string
	// confirmed: Redis refreshed (or took back) the key with the lease's value; sent is when
	// the step's command was sent (a self-fencing lease's deadline counts from it).
	confirmed bool
	sent      time.Time
}

// watch runs the lease's Redis steps every interval until ctx is cancelled (Release) or the
// lease is lost, by Redis's answer (another holder, or the tombstone of a force release) or
// by a force release of the in-process lease. It closes done when it and its step have
// returned.
func (l *FailoverLease) watch(ctx context.Context) {
	var wg sync.WaitGroup
	defer l.exit(&wg)

	w := &watchState{interval: l.f.interval(), results: make(chan stepResult, maxSteps)}
	tick := time.NewTicker(w.interval)
	defer tick.Stop()
	forced := l.mem.Lost() // closed by Failover.ForceRelease
	var expire, first <-chan time.Time
	if l.f.selfFence {
		t := time.NewTimer(time.Until(l.deadline.get()))
		defer t.Stop()
		expire, w.expire = t.C, t
		// The first refresh is due an interval after the acquisition was sent, not after it
		// returned: on a slow link the acquisition's own round trip is most of that.
		ttl := l.f.redis.ttl
		sent := l.deadline.get().Add(-(ttl - lease.Margin(ttl)))
		f := time.NewTimer(max(time.Until(sent.Add(w.interval)), 0))
		defer f.Stop()
		first = f.C
	}
	for {
		select {
		case <-first:
			if !l.pastDeadline() {
				l.onTick(ctx, w, &wg)
			}
		case <-expire:
			if ctx.Err() != nil {
				l.awaitInFlight(w)
				return
			}
			if l.pastDeadline() {
				l.markLost("self-fenced: no refresh confirmed by Redis within the lease TTL less its margin")
				l.awaitInFlight(w)
				return
			}
			w.expire.Reset(time.Until(l.deadline.get()))
		case <-ctx.Done():
			// A step that took the key just now leaves it to Release to delete.
			l.awaitInFlight(w)
			return
		case <-forced:
			// Failover.ForceRelease removed the in-process lease and deletes the key next.
			// The lock, if any, is kept for Release: its token-checked delete only removes a
			// key this lease still holds (one a step re-took as the force release ran).
			l.log.Error("lock: lease lost", "reason", "force-released")
			l.lost.fire()
			l.awaitInFlight(w)
			return
		case <-tick.C:
			if l.pastDeadline() { // woken past the deadline (a pause): before anything else
				l.markLost("self-fenced: the lease deadline passed before its refresh")
				l.awaitInFlight(w)
				return
			}
			l.onTick(ctx, w, &wg)
		case res := <-w.results:
			w.inFlight--
			if l.onResult(ctx, w, res) {
				return
			}
		}
	}
}

// watchState is what the watch loop keeps between its ticks.
type watchState struct {
	interval   time.Duration   // between steps (Failover.interval)
	results    chan stepResult // the in-flight steps' results (room for maxSteps)
	inFlight   int             // steps started and not received
	started    time.Time       // when the last step started
	reported   bool            // the in-flight steps' silence was reported to the monitor
	staleVal   string          // a same-owner key of another token being waited for
	staleUntil time.Time       // the latest staleVal could expire unless kept alive
	expire     *time.Timer     // with SelfFence: fires at the deadline
}

// maxSteps bounds the watchdog's steps in flight at once: one, unless the lease self-fences
// (stepsAtOnce): then as many as a step may last intervals (the TTL less its margin, 8/10 of
// it, at a tenth of the TTL each).
const maxSteps = 8

// interval is how often a lease's watchdog starts a step: every TTL/3; a self-fencing lease
// every TTL/10, so that a refresh sent an interval after the last confirmed one and answered
// within 7/10 of the TTL still lands before the deadline (TTL less lease.Margin, a fifth,
// after that one was sent): a slow Redis is not a lost lease. With a round trip of 2/5 of the
// TTL (2 s with 5 s) a refresh may come 3/10 of the TTL late (a busy host, a pause of the
// stream) and the lease holds.
func (f *Failover) interval() time.Duration {
	if f.selfFence {
		return f.redis.ttl / 10
	}
	return f.redis.ttl / 3
}

// awaitInFlight waits for the in-flight steps, if any, and keeps the lock they took for Release.
func (l *FailoverLease) awaitInFlight(w *watchState) {
	for ; w.inFlight > 0; w.inFlight-- {
		if res := <-w.results; res.lock != nil {
			l.rlock = res.lock
		}
	}
}

// stepsAtOnce is how many steps the watchdog lets be in flight at once. A self-fencing lease
// refreshes every interval (TTL/10) even while earlier refreshes wait for their replies: on a
// slow link (a round trip above the interval) each refresh then extends the deadline an
// interval after the one before, instead of the skipped tick costing a whole interval and the
// deadline passing while Redis answers in time. Others keep one step in flight.
func (l *FailoverLease) stepsAtOnce() int {
	if l.f.selfFence {
		return maxSteps
	}
	return 1
}

// onTick starts a step, unless one is in flight: then it reports the step's silence to the
// monitor once it has lasted an interval.
func (l *FailoverLease) onTick(ctx context.Context, w *watchState, wg *sync.WaitGroup) {
	if w.inFlight >= l.stepsAtOnce() {
		if !w.reported && time.Since(w.started) >= w.interval {
			w.reported = true
			l.f.mon.Fail(fmt.Errorf("lock: tenant %s: Redis did not answer within %v: %w",
				l.tenant, w.interval, context.DeadlineExceeded))
		}
		return
	}
	w.inFlight, w.started, w.reported = w.inFlight+1, time.Now(), false
	held := l.rlock
	wg.Add(1)
	go func() {
		defer wg.Done()
		end := time.Now().Add(w.interval)
		if l.f.selfFence {
			// A slow Redis has until the latest deadline this step's refresh could set (the
			// deadline as it stands now would cut it short: the steps before it, still in
			// flight, move the deadline on as they are confirmed). Past the deadline the
			// watch loses the lease whatever the step does.
			ttl := l.f.redis.ttl
			end = time.Now().Add(ttl - lease.Margin(ttl))
		}
		sctx, cancel := context.WithDeadline(ctx, end)
		defer cancel()
		w.results <- l.step(sctx, held)
	}()
}

// onResult applies a step's result; it reports whether the watch ends (the lease stopped,
// or is lost).
func (l *FailoverLease) onResult(ctx context.Context, w *watchState, res stepResult) bool {
	if ctx.Err() != nil {
		if res.lock != nil {
			l.rlock = res.lock
		}
		if res.released {
			l.rlock = nil // the key is gone: nothing left for Release to delete
		}
		return true
	}
	if res.released {
		// A force release of another process: free the in-process lease too, as
		// Failover.ForceRelease does in its own process, before the run hears of it.
		_ = l.mem.Release(ctx) // never fails
		l.markLost("force-released: the key was removed and its tombstone holds our value")
		return true
	}
	if res.movedOn != "" {
		l.markLost(res.movedOn)
		return true
	}
	if res.confirmed && l.f.selfFence {
		if res.sent.After(l.deadline.get()) { // sent past the deadline: the run has stopped
			l.markLost("self-fenced: the lease deadline passed before its refresh")
			return true
		}
		l.deadline.confirmed(res.sent, l.f.redis.ttl)
	}
	if res.err != nil && l.f.selfFence {
		l.f.mon.Fail(res.err)
		l.log.Warn("lock: lease step failed; retrying until the lease deadline", "error", res.err,
			"deadline_in", time.Until(l.deadline.get()))
		return false
	}
	if res.err != nil {
		if !l.f.mon.Fail(res.err) {
			l.log.Warn("lock: lease step failed; retrying", "error", res.err)
		} else {
			l.log.Debug("lock: Redis unreachable; the lease goes on in memory", "error", res.err)
		}
		return false
	}
	if res.other == "" {
		if l.rlock == nil && res.lock != nil {
			l.log.Info("lock: lease taken in Redis again")
		}
		l.rlock, w.staleVal = res.lock, ""
		return false
	}
	return l.judgeOther(w, res)
}

// judgeOther judges a step that found another token holding the key; it reports whether the
// lease is lost. Only another lease of the same owner, whose key expires as it was found
// (nobody keeps it alive), is waited for.
func (l *FailoverLease) judgeOther(w *watchState, res stepResult) bool {
	if l.rlock != nil {
		l.markLost(fmt.Sprintf("the key is held by %q", ownerOf(res.other)))
		return true
	}
	switch owner := ownerOf(res.other); {
	case owner != l.owner:
		l.markLost(fmt.Sprintf("the key is held by %q", owner))
		return true
	case res.left == 0:
		l.markLost("the key is held without expiry by another lease of the same owner")
		return true
	case w.staleVal == "":
		w.staleVal, w.staleUntil = res.other, res.expires.latest
		l.log.Warn("lock: another lease of the same owner holds the key; waiting for it to expire",
			"expires_in", res.left)
	case res.other != w.staleVal:
		l.markLost("the key was re-taken by another lease of the same owner")
		return true
	case res.expires.earliest.After(w.staleUntil.Add(w.interval)):
		// Its expiry moved (by more than a tick: not an artefact of when the reads ran, which
		// a busy process may delay): someone refreshes it. Judged by Redis's answers alone,
		// never by when this loop got to read them.
		l.markLost("another lease of the same owner keeps the key alive")
		return true
	}
	return false
}

// exit waits for the in-flight step, finishes the release if a Release gave up waiting,
// and closes done, under mu so that Release sees either done closed or its abandonment
// taken over.
func (l *FailoverLease) exit(wg *sync.WaitGroup) {
	wg.Wait()
	l.cancel()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.abandoned {
		ctx, cancel := context.WithTimeout(context.Background(), l.f.redis.ttl)
		defer cancel()
		if err := l.finish(ctx); err != nil {
			l.log.Warn("lock: release", "error", err)
		}
	}
	close(l.done)
}

// step runs one watchdog step against Redis: refresh (or re-take with the same value) the
// key held, or take it with a fresh token when none is. It takes no key once the in-process
// lease is force-released: Failover.ForceRelease removes it before the key, so a key found
// gone by that deletion is never taken again. Nor does it re-take a key that a force release
// of another process removed: the tombstone it left holds the lease's value, and the step
// answers released.
func (l *FailoverLease) step(ctx context.Context, held *redislock.Lock) stepResult {
	sent := time.Now()
	if held != nil {
		err := held.Refresh(ctx, l.f.redis.ttl, nil)
		if err == nil {
			return stepResult{lock: held, confirmed: true, sent: sent}
		}
		if !errors.Is(err, redislock.ErrNotObtained) {
			return stepResult{lock: held, err: fmt.Errorf("lock: refresh tenant %s: %w", l.tenant, err)}
		}
		if l.forceReleased() {
			return stepResult{lock: held} // the watchdog is about to see it
		}
		// The key is gone (expired, an emptied Redis, or a force release) or another token
		// holds it: re-take it with the same value if it is absent and no tombstone says a
		// force release removed it. The fence epoch is the caller's business. held stays
		// valid: it refreshes and releases by value, which is unchanged. A self-fencing lease
		// takes nothing back past its deadline: its run has stopped, and another executor may
		// have judged it gone.
		if l.pastDeadline() {
			return stepResult{lock: held, err: fmt.Errorf("lock: tenant %s: the key is gone and the lease deadline passed", l.tenant)}
		}
		sent = time.Now()
		switch ans, err := l.f.redis.takeBack(ctx, l.tenant, l.owner, held.Token()+held.Metadata()); {
		case err != nil:
			return stepResult{lock: held, err: fmt.Errorf("lock: re-take tenant %s: %w", l.tenant, err)}
		case ans == tombstoned:
			return stepResult{released: true}
		case ans == takenBack:
			l.log.Info("lock: lease key was gone; taken again with the same value")
			return stepResult{lock: held, confirmed: true, sent: sent}
		case ans == movedOn:
			return stepResult{movedOn: "the key was gone and the tenant has moved on to another task"}
		}
	} else {
		if l.forceReleased() {
			return stepResult{}
		}
		lk, err := l.f.redis.obtain(ctx, l.key, "", l.owner)
		if err == nil {
			return stepResult{lock: lk}
		}
		if !errors.Is(err, redislock.ErrNotObtained) {
			return stepResult{err: fmt.Errorf("lock: take tenant %s: %w", l.tenant, err)}
		}
	}
	before := time.Now()
	val, left, ok, err := l.f.redis.read(ctx, l.key)
	switch {
	case err != nil:
		return stepResult{lock: held, err: fmt.Errorf("lock: holder of tenant %s: %w", l.tenant, err)}
	case !ok:
		// Expired between the two calls: try again at the next tick.
		return stepResult{lock: held}
	default:
		res := stepResult{lock: held, other: val, left: left}
		res.expires.earliest, res.expires.latest = before.Add(left), time.Now().Add(left)
		return res
	}
}

// forceReleased reports whether Failover.ForceRelease removed the in-process lease.
func (l *FailoverLease) forceReleased() bool {
	select {
	case <-l.mem.Lost():
		return true
	default:
		return false
	}
}

// markLost closes lost and forgets the Redis lock, which is no longer ours; only watch
// calls it, once, just before returning.
func (l *FailoverLease) markLost(reason string) {
	l.rlock = nil
	l.log.Error("lock: lease lost", "reason", reason)
	l.lost.fire()
}
