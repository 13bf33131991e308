package schedule

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/infra/rediskey"
)

// Defaults of RedisOptions.
const (
	defaultFallback = 5 * time.Second
	defaultClaimTTL = 30 * time.Second
	defaultBatch    = 100
)

// RedisOptions configures a Redis scheduler.
type RedisOptions struct {
	// Prefix is the key prefix (keys are built by rediskey.New(Prefix)); "" means
	// "executor:".
	Prefix string
	// Fallback is the period of the check that needs no wake message: the loop looks at
	// the ZSET at least this often. Zero or negative means 5s.
	Fallback time.Duration
	// ClaimTTL is a claim's visibility timeout: a claimed entry that is not acknowledged
	// (Due failed, or its claimer died) is due again this long after the claim. It should
	// exceed the time Due takes. Zero or negative means 30s.
	ClaimTTL time.Duration
	// Batch is the most entries one claim takes; the loop claims again while full batches
	// come back. Zero or negative means 100.
	Batch int
	// Logger receives outages and failed Due calls; nil means slog.Default().
	Logger *slog.Logger
}

// Redis is a scheduler whose entries live in the Redis ZSET executor:schedule, shared by
// every executor on that Redis: any running instance starts a due entry, exactly one at a
// time (see the package documentation for the guarantees). A scheduler that is not running
// still schedules and unschedules; its entries are started by whichever instance runs.
//
// The client is not closed by the scheduler.
type Redis struct {
	client   redis.UniversalClient
	keys     rediskey.Keys
	fallback time.Duration
	claimTTL time.Duration
	batch    int
	log      *slog.Logger

	mu       sync.Mutex
	pending  map[string]pendingOp // writes Redis did not take yet, by plan id
	seq      uint64               // last pendingOp.seq given
	inflight map[string]struct{}  // plans whose Due call runs in this process

	poke chan struct{} // capacity 1: something was queued in pending

	life    sync.Mutex // serialises SetDue, Start and Stop
	due     Due        // set by SetDue, run by Start
	started bool
	stopped bool
	cancel  context.CancelFunc // cancels the loop and the ctx of Due calls
	done    chan struct{}      // closed when the loop has returned
	ps      *redis.PubSub
	wake    <-chan any     // ps's messages and (re)subscriptions
	calls   sync.WaitGroup // Due calls in flight

	failing bool // the loop's last Redis call failed (owned by the loop)
}

// NewRedis returns a Redis scheduler on client, not yet started.
func NewRedis(client redis.UniversalClient, opts RedisOptions) *Redis {
	if opts.Fallback <= 0 {
		opts.Fallback = defaultFallback
	}
	if opts.ClaimTTL <= 0 {
		opts.ClaimTTL = defaultClaimTTL
	}
	if opts.Batch <= 0 {
		opts.Batch = defaultBatch
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Redis{
		client:   client,
		keys:     rediskey.New(opts.Prefix),
		fallback: opts.Fallback,
		claimTTL: opts.ClaimTTL,
		batch:    opts.Batch,
		log:      opts.Logger,
		pending:  map[string]pendingOp{},
		inflight: map[string]struct{}{},
		poke:     make(chan struct{}, 1),
	}
}

// Schedule makes plan planID due at at (to the millisecond, rounded up); re-scheduling an
// id replaces its time. When the entry is the earliest one, every running scheduler on the
// same Redis is woken for it.
//
// A Redis that does not answer does not fail the call: the entry is kept in memory, a
// warning logged, and the write retried by the loop until Redis takes it (a scheduler that
// is not running keeps it until Start). Schedule fails only for an empty planID.
func (r *Redis) Schedule(ctx context.Context, planID string, at time.Time) error {
	if planID == "" {
		return errEmptyPlanID
	}
	ms := millis(at)
	// An id with a write still queued goes behind it, so the queue never overwrites a
	// newer direct write.
	if r.queueIfPending(planID, pendingOp{at: ms}) {
		return nil
	}
	if err := r.write(ctx, planID, ms); err != nil {
		r.queue(planID, pendingOp{at: ms})
		r.log.Warn("schedule: Redis unavailable; the entry is kept in memory until Redis answers",
			"plan", planID, "at", time.UnixMilli(ms), "err", err)
	}
	return nil
}

// Unschedule removes plan planID's entry and reports whether it was there. An entry that is
// claimed but not yet acknowledged is still there (the Due call in flight checks the plan's
// status anyway). An entry kept in memory during an outage is removed there, and from Redis
// once it answers. A Redis error is returned (wrapped) when the entry was not in memory.
func (r *Redis) Unschedule(ctx context.Context, planID string) (bool, error) {
	if had, ok := r.unqueue(planID); ok {
		return had, nil
	}
	n, err := r.client.ZRem(ctx, r.keys.Schedule(), planID).Result()
	if err != nil {
		return false, fmt.Errorf("schedule: unschedule %s: %w", planID, err)
	}
	return n > 0, nil
}

// write adds or moves planID's entry in Redis (schedule.lua), publishing its time when it
// is the earliest. Errors are Redis's, unwrapped.
func (r *Redis) write(ctx context.Context, planID string, ms int64) error {
	keys := []string{r.keys.Schedule()}
	return scheduleScript.Run(ctx, r.client, keys, ms, planID, r.keys.ScheduleWake()).Err()
}
