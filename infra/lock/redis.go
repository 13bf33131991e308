package lock

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/domain/lease"
	"github.com/executor-dev/executor/infra/rediskey"
)

// DefaultRedisTTL is the lease TTL used when RedisOptions.TTL is zero or negative.
const DefaultRedisTTL = 60 * time.Second

// MinRedisTTL is the smallest lease TTL a Redis locker uses; smaller RedisOptions.TTL values
// are raised to it.
const MinRedisTTL = 10 * time.Millisecond

// tokenLen is the length of the random token bsm/redislock stores before Options.Metadata:
// 16 random bytes in unpadded base64 (redislock v0.9.4, Client.randomToken).
const tokenLen = 22

// RedisOptions configures a Redis locker.
type RedisOptions struct {
	// Keys builds the lease keys (docs/design.md §5); the zero value means rediskey.New("").
	Keys rediskey.Keys
	// TTL is how long a lease lives without a refresh; each lease refreshes it every TTL/3.
	// Zero or negative means DefaultRedisTTL; values below MinRedisTTL are raised to it.
	TTL time.Duration
	// Scripter runs redislock's scripts; nil means the client. The executor passes the
	// client's AutoPipeline, so the leases of many runs share round trips.
	Scripter redis.Scripter
	// Logger receives refresh failures and lease losses; nil means slog.Default().
	Logger *slog.Logger
	// SelfFence makes a Failover locker's leases self-fencing, for executors that share the
	// Redis (the `shared` topology): a lease is never taken nor kept on memory alone while
	// Redis is away (Acquire fails with Redis's error), and it is lost at its Deadline, the
	// send time of the last refresh Redis confirmed plus the TTL less lease.Margin, whatever
	// the watchdog was doing (a process woken from a pause loses it before anything else). A
	// Redis locker's leases always self-fence.
	SelfFence bool
}

// Redis is a tenant locker on Redis (bsm/redislock): one key per tenant,
// Keys.TenantLock(tenantID), whose value is redislock's random token followed by the owner.
// Leases expire after the TTL unless refreshed, and each held lease refreshes itself.
type Redis struct {
	client redis.UniversalClient
	locker *redislock.Client
	keys   rediskey.Keys
	ttl    time.Duration
	log    *slog.Logger
	warmed atomic.Bool // warm refreshed a lease once: Redis caches the refresh script
}

var _ interface {
	Acquire(context.Context, string, string) (lease.Lease, error)
} = (*Redis)(nil)

var _ interface {
	Holder(context.Context, string) (lease.Holder, bool, error)
} = (*Redis)(nil)

// NewRedis returns a tenant locker on client. The client is not closed by the locker.
func NewRedis(client redis.UniversalClient, opts RedisOptions) *Redis {
	if opts.Keys.Prefix() == "" {
		opts.Keys = rediskey.New("")
	}
	switch {
	case opts.TTL <= 0:
		opts.TTL = DefaultRedisTTL
	case opts.TTL < MinRedisTTL:
		opts.TTL = MinRedisTTL
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Scripter == nil {
		opts.Scripter = client
	}
	return &Redis{
		client: client,
		locker: redislock.New(opts.Scripter),
		keys:   opts.Keys,
		ttl:    opts.TTL,
		log:    opts.Logger,
	}
}

// TTL returns the lease TTL the locker uses.
func (r *Redis) TTL() time.Duration { return r.ttl }

// Acquire takes tenantID's lease for owner (the run's <planId>:<taskId>) without waiting.
// When another run holds it, the error wraps lease.ErrHeld and names the holder when it can
// be read. The returned lease refreshes itself every TTL/3 until Release or loss.
func (r *Redis) Acquire(ctx context.Context, tenantID, owner string) (lease.Lease, error) {
	key := r.keys.TenantLock(tenantID)
	// The key's TTL starts when Redis runs the script, which is after this instant, so
	// counting the lease's life from here never overestimates it.
	start := time.Now()
	lk, err := r.obtain(ctx, key, "", owner)
	if errors.Is(err, redislock.ErrNotObtained) {
		return nil, r.heldError(ctx, tenantID)
	}
	if err != nil {
		return nil, fmt.Errorf("lock: acquire tenant %s: %w", tenantID, err)
	}

	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l := &RedisLease{
		lock:   lk,
		tenant: tenantID,
		owner:  owner,
		ttl:    r.ttl,
		log:    r.log.With("tenant", tenantID, "owner", owner, "key", key),
		cancel: cancel,
		lost:   newLoss(),
		done:   make(chan struct{}),
	}
	go l.watch(wctx, start)
	return l, nil
}

// Holder reports who holds tenantID's lease and how long it has left, reading the value and
// its PTTL in one round trip. A lease that is not held gives (zero, false, nil).
func (r *Redis) Holder(ctx context.Context, tenantID string) (lease.Holder, bool, error) {
	val, left, held, err := r.read(ctx, r.keys.TenantLock(tenantID))
	if err != nil || !held {
		if err != nil {
			err = fmt.Errorf("lock: holder of tenant %s: %w", tenantID, err)
		}
		return lease.Holder{}, false, err
	}
	return lease.Holder{Owner: ownerOf(val), TTL: left}, true, nil
}

// obtain runs redislock's obtain script once (no retry): it sets key to token+owner with
// the locker's TTL if the key is absent, or if it already holds a value starting with token
// (re-taking a lease with its own value). An empty token means a fresh random one. Another
// holder gives redislock.ErrNotObtained; other errors are Redis's, unwrapped.
func (r *Redis) obtain(ctx context.Context, key, token, owner string) (*redislock.Lock, error) {
	return r.locker.Obtain(ctx, key, r.ttl, &redislock.Options{
		Token:         token,
		Metadata:      owner,
		RetryStrategy: redislock.NoRetry(),
	})
}

// warm refreshes lk, a lease just taken, if no lease of r was refreshed yet: redislock runs
// its scripts by EVALSHA, and a script Redis has not cached costs a second round trip (NOSCRIPT,
// then EVAL). Paid at the first acquisition, while it is cheap, instead of by the first
// refresh of the executor's leases, which on a slow link (a round trip of seconds) would land
// after their deadlines all at once. A failure leaves it to the next acquisition. A Redis
// restarted empty flushes its script cache: the first refreshes after it pay the round trip.
func (r *Redis) warm(ctx context.Context, lk *redislock.Lock) {
	if r.warmed.Load() {
		return
	}
	if err := lk.Refresh(ctx, r.ttl, nil); err == nil {
		r.warmed.Store(true)
	}
}

// heldError is the error for tenantID's lease held by another run: it wraps lease.ErrHeld
// and names the holder when it can be read.
func (r *Redis) heldError(ctx context.Context, tenantID string) error {
	if h, held, err := r.Holder(ctx, tenantID); err == nil && held {
		return fmt.Errorf("lock: tenant %s held by %s: %w", tenantID, h.Owner, lease.ErrHeld)
	}
	return fmt.Errorf("lock: tenant %s: %w", tenantID, lease.ErrHeld)
}

// read returns key's value and time left in one round trip; held is false when the key does
// not exist. left is 0 for a key without expiry. redis.Nil never leaves read; other errors
// are Redis's, unwrapped, but for an EXECABORT, which wraps the refusal that caused it too.
func (r *Redis) read(ctx context.Context, key string) (val string, left time.Duration, held bool, err error) {
	var get *redis.StringCmd
	var pttl *redis.DurationCmd
	_, err = r.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		get = p.Get(ctx, key)
		pttl = p.PTTL(ctx, key)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		if redis.IsExecAbortError(err) {
			// EXECABORT does not say why: the command Redis refused when it was queued does
			// (OOM, typically: Redis 7 refuses every command queued in a MULTI while out of
			// memory).
			for _, c := range []redis.Cmder{get, pttl} {
				if cerr := c.Err(); cerr != nil && !errors.Is(cerr, redis.Nil) {
					return "", 0, false, fmt.Errorf("%w (%w)", err, cerr)
				}
			}
		}
		return "", 0, false, err
	}
	val, err = get.Result()
	if errors.Is(err, redis.Nil) {
		return "", 0, false, nil
	}
	if err != nil {
		return "", 0, false, err
	}
	left, err = pttl.Result()
	if err != nil {
		return "", 0, false, err
	}
	// PTTL answers -2 for a missing key and -1 for a key without expiry (go-redis passes
	// both through as negative durations, not scaled).
	switch {
	case left == -2:
		return "", 0, false, nil
	case left < 0:
		left = 0 // no expiry
	case left == 0:
		// Less than a millisecond left: expiring, which is not "no expiry" (a failover lease
		// waiting for a stale key of its owner would take it for one kept forever).
		left = time.Millisecond
	}
	return val, left, true, nil
}

// ownerOf returns the owner stored in a lease key's value, after redislock's token; "" when
// the value is too short to hold one.
func ownerOf(val string) string {
	if len(val) > tokenLen {
		return val[tokenLen:]
	}
	return ""
}

// RedisLease is a lease held in a Redis locker. A watchdog goroutine refreshes it every TTL/3
// until Release or loss. The lease is lost (Lost closes) when a refresh finds the key gone or
// taken by another token, or at its Deadline: when no refresh has been confirmed for the TTL
// less lease.Margin, counted from when the last confirmed one was sent (Redis may expire the
// key a margin later); transient refresh errors are retried at the next tick until then.
type RedisLease struct {
	lock   *redislock.Lock
	tenant string
	owner  string
	ttl    time.Duration
	log    *slog.Logger

	cancel context.CancelFunc // stops the watchdog
	lost   *loss              // fired by the watchdog, at most once, when the lease is lost
	done   chan struct{}      // closed when the watchdog and its refresh have returned

	mu       sync.Mutex // serialises Release's Redis call
	released bool

	deadline deadline // see Deadline
}

// deadline is a self-fencing lease's: the send time of the last refresh the store confirmed,
// plus the TTL less lease.Margin; read by the run while the watchdog moves it.
type deadline struct {
	mu sync.Mutex
	at time.Time
}

// confirmed moves the deadline to okAt + ttl - margin (okAt: when the confirmed command was
// sent), never back.
func (d *deadline) confirmed(okAt time.Time, ttl time.Duration) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	if at := okAt.Add(ttl - lease.Margin(ttl)); at.After(d.at) {
		d.at = at
	}
	return d.at
}

// get returns the deadline.
func (d *deadline) get() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.at
}

// Deadline is when the lease counts itself gone unless a refresh is confirmed before: the
// send time of the last confirmed refresh plus the TTL less lease.Margin (Lost closes then).
func (l *RedisLease) Deadline() time.Time { return l.deadline.get() }

// Lost is closed when the lease is lost before Release; the run holding it must stop.
func (l *RedisLease) Lost() <-chan struct{} { return l.lost.lost() }

// AfterLost runs f once the lease is lost (see lease.Lease).
func (l *RedisLease) AfterLost(f func()) (stop func() bool) { return l.lost.after(f) }

// Release stops the watchdog, waits for it to return, and deletes the key if this lease
// still holds it. Releasing a lost lease, a lease whose key is gone, or a released lease is
// not an error; Release is safe to call concurrently, with itself and with loss. A Redis
// error leaves the key to expire after the TTL and may be retried by calling Release again.
func (l *RedisLease) Release(ctx context.Context) error {
	l.cancel()
	select {
	case <-l.done:
	default:
		select {
		case <-l.done:
		case <-ctx.Done():
			return fmt.Errorf("lock: release tenant %s: %w", l.tenant, ctx.Err())
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released || l.isLost() {
		// A lost lease's key belongs to someone else, or expires by itself within the TTL.
		return nil
	}
	if err := l.lock.Release(ctx); err != nil && !errors.Is(err, redislock.ErrLockNotHeld) {
		return fmt.Errorf("lock: release tenant %s: %w", l.tenant, err)
	}
	l.released = true
	return nil
}

func (l *RedisLease) isLost() bool {
	select {
	case <-l.lost.lost():
		return true
	default:
		return false
	}
}

// refreshResult is the outcome of one refresh, started at start.
type refreshResult struct {
	start time.Time
	err   error
}

// watch refreshes the lease every TTL/3 until ctx is cancelled (Release) or the lease is
// lost. okAt is when the last successful write of the key's TTL was sent. A refresh runs in
// its own goroutine so that loss is declared on time even when the client blocks past its
// context (go-redis without ContextTimeoutEnabled); at most one is in flight, and watch
// waits for it before closing done.
func (l *RedisLease) watch(ctx context.Context, okAt time.Time) {
	var wg sync.WaitGroup
	defer close(l.done)
	defer wg.Wait()
	defer l.cancel() // cancel an in-flight refresh when the lease is lost

	interval := l.ttl / 3
	tick := time.NewTicker(interval)
	defer tick.Stop()
	expire := time.NewTimer(time.Until(l.deadline.confirmed(okAt, l.ttl)))
	defer expire.Stop()
	results := make(chan refreshResult, 1)
	inFlight := false

	for {
		select {
		case <-ctx.Done():
			return
		case <-expire.C:
			if ctx.Err() != nil {
				return
			}
			l.markLost("self-fenced: no refresh confirmed within the lease TTL less its margin")
			return
		case <-tick.C:
			if !time.Now().Before(l.deadline.get()) { // woken past the deadline (a pause)
				l.markLost("self-fenced: the lease deadline passed before its refresh")
				return
			}
			if inFlight {
				continue
			}
			inFlight = true
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				rctx, cancel := context.WithDeadline(ctx, l.deadline.get())
				defer cancel()
				results <- refreshResult{start: start, err: l.lock.Refresh(rctx, l.ttl, nil)}
			}()
		case res := <-results:
			inFlight = false
			switch {
			case ctx.Err() != nil:
				return
			case res.err == nil:
				expire.Reset(time.Until(l.deadline.confirmed(res.start, l.ttl)))
			case errors.Is(res.err, redislock.ErrNotObtained):
				l.markLost("the key is gone or held by another token")
				return
			default:
				l.log.Warn("lock: lease refresh failed; retrying", "error", res.err,
					"deadline_in", time.Until(l.deadline.get()))
			}
		}
	}
}

// markLost closes lost; only watch calls it, once, just before returning.
func (l *RedisLease) markLost(reason string) {
	l.log.Error("lock: lease lost", "reason", reason)
	l.lost.fire()
}
