package redisrepo

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/outage"
)

// claimsPausedReason is why new tenant claims wait after Redis lost its data.
const claimsPausedReason = "Redis lost its data lately (restarted empty, flushed or failed over to an empty replica): " +
	"new tenant claims wait one lease TTL, so that the executors that were running tenants take their leases back " +
	"and write their state back first"

// generation is the Redis generation (rediskey.Keys.Generation) this store saw last, and
// until when new tenant claims wait, as it last learnt.
type generation struct {
	mu     sync.Mutex
	seen   string    // "" before the first check
	paused time.Time // claims wait until then (zero: they do not)
}

// pause records that claims wait for d from now.
func (g *generation) pause(d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if until := time.Now().Add(d); until.After(g.paused) {
		g.paused = until
	}
}

// pausedFor returns how long claims still wait, as this store last learnt (0: they do not).
func (g *generation) pausedFor() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return max(time.Until(g.paused), 0)
}

func (g *generation) load() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.seen
}

func (g *generation) store(token string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seen = token
}

// checkGeneration runs generation.lua: it learns Redis's generation, making it when missing;
// wait is how long new tenant claims must still wait; lost reports that Redis lost its data
// since this store saw it (the generation changed or was gone), which also marks everything
// for the write-back.
func (lw *lossWatch) checkGeneration(ctx context.Context) (wait time.Duration, lost bool, err error) {
	return lw.generation(ctx, false)
}

// renewGeneration makes a new generation when Redis still holds the one this store saw:
// Redis lost part of its data but not the generation hash (a failover to a replica that lacked
// writes it acknowledged), which the other executors would not notice otherwise. They learn it
// at their next check, write back what they hold, and new claims wait one lease TTL.
func (lw *lossWatch) renewGeneration(ctx context.Context) error {
	_, _, err := lw.generation(ctx, true)
	return err
}

func (lw *lossWatch) generation(ctx context.Context, renew bool) (wait time.Duration, lost bool, err error) {
	flag := "0"
	if renew {
		flag = "1"
	}
	res, err := generationScript.Run(ctx, lw.s.client, []string{lw.s.keys.Generation()},
		lw.gen.load(), ulid.Make().String(), lw.s.leaseTTL.Milliseconds(), flag).Slice()
	if err != nil {
		return 0, false, wrap("check generation", err)
	}
	if len(res) != 3 {
		return 0, false, fmt.Errorf("redisrepo: check generation: unexpected reply %v", res)
	}
	token, _ := res[0].(string)
	ms, _ := res[1].(int64)
	changed, _ := res[2].(int64)
	lw.gen.store(token)
	wait = time.Duration(ms) * time.Millisecond
	lw.gen.pause(wait)
	if changed == 1 {
		lw.lostData.Store(true)
	}
	return wait, changed == 1, nil
}

// claimsPaused returns a *task.ClaimsPausedError while new tenant claims wait as far as this
// store last learnt from Redis: the check of claims made on memory while Redis is away (a
// loss of Redis's data is such an outage, for the moment of the write-back).
func (lw *lossWatch) claimsPaused() error {
	if wait := lw.gen.pausedFor(); wait > 0 {
		return &task.ClaimsPausedError{RetryAfter: wait, Reason: claimsPausedReason}
	}
	return nil
}

// claimsPausedFor returns how long claims still wait after Redis lost data, as this store last
// learnt (0: they do not): the orchestrator claims no task from the shared queue meanwhile.
func (lw *lossWatch) claimsPausedFor() time.Duration { return lw.gen.pausedFor() }

// claimsAllowed returns a *task.ClaimsPausedError while new tenant claims must wait (Redis
// lost its data less than a lease TTL ago). Finding the loss itself, it also reports it to the
// outage monitor (outage.ErrDataLost), so that this executor writes back what it holds.
func (lw *lossWatch) claimsAllowed(ctx context.Context) error {
	wait, lost, err := lw.checkGeneration(ctx)
	if err != nil {
		return err
	}
	if lost {
		lw.s.mon.Fail(fmt.Errorf("redisrepo: the generation changed: %w", outage.ErrDataLost))
	}
	if wait > 0 {
		return &task.ClaimsPausedError{RetryAfter: wait, Reason: claimsPausedReason}
	}
	return nil
}

// masterChanged records that the client's connections now go to another master (a Sentinel
// failover): the new master may lack writes the old one acknowledged, so the next write-back
// writes back everything this executor holds, as after a loss of data, and renews the
// generation so that the other executors do too.
func (lw *lossWatch) masterChanged(from, to string) {
	lw.lostData.Store(true)
	lw.rollback.Store(true)
	lw.s.log.Warn("redis: the master changed; it may lack writes the old one acknowledged: writing back every plan and task this executor holds",
		"from", from, "to", to)
}
