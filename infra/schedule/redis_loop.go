package schedule

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	// retryPause is the loop's longest sleep while Redis fails or entries wait in memory.
	retryPause = 250 * time.Millisecond
	// ackTimeout bounds an acknowledgement, which outlives Stop's cancellation.
	ackTimeout = 5 * time.Second
)

// loop runs passes (see pass) until ctx is done: at the earliest entry's time, at least
// every Fallback, when something is queued in memory, and after each pub/sub
// (re)subscription. A wake message carrying an earlier time than the one the timer is set
// for re-arms the timer for it.
func (r *Redis) loop(ctx context.Context, due Due, wake <-chan any) {
	defer close(r.done)
	timer := time.NewTimer(0)
	defer timer.Stop()
	var next time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
			next = r.pass(ctx, due)
		case <-r.poke:
			next = r.pass(ctx, due)
		case msg, ok := <-wake:
			if !ok {
				wake = nil
				continue
			}
			at, ok := wakeTime(msg)
			switch {
			case !ok:
				// A (re)subscription, after which messages may have been missed, or a
				// message that tells no time.
				next = r.pass(ctx, due)
			case at.Before(next):
				next = at
			default:
				continue
			}
		}
		timer.Reset(time.Until(next))
	}
}

// wakeTime returns the time a wake message announces; ok is false for anything else.
func wakeTime(msg any) (time.Time, bool) {
	m, ok := msg.(*redis.Message)
	if !ok {
		return time.Time{}, false
	}
	ms, err := strconv.ParseInt(m.Payload, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(ms), true
}

// pass writes the entries kept in memory, claims the due entries (while full batches come
// back) and calls due for each, and returns when the next pass is needed: the earliest
// entry's time, capped at Fallback from now, and at 250 ms while Redis fails or entries
// wait in memory.
func (r *Redis) pass(ctx context.Context, due Due) time.Time {
	start := time.Now()
	next := start.Add(r.fallback)
	ok := true
	if err := r.flush(ctx); err != nil {
		ok = r.trouble(ctx, "write entries kept in memory", err)
	}
	claimed := true
	for {
		ids, until, err := r.claim(ctx, time.Now())
		if err != nil {
			ok, claimed = r.trouble(ctx, "claim", err), false
			break
		}
		r.dispatch(ctx, due, ids, until)
		if len(ids) < r.batch {
			break
		}
	}
	if claimed {
		at, found, err := r.earliest(ctx)
		switch {
		case err != nil:
			ok = r.trouble(ctx, "read the earliest entry", err)
		case found && at.Before(next):
			next = at
		}
	}
	if ok {
		r.recovered()
	}
	if !ok || r.pendingCount() > 0 {
		if soon := time.Now().Add(retryPause); soon.Before(next) {
			next = soon
		}
	}
	return next
}

// claim takes up to Batch entries due at now (claim.lua); until is their claim's expiry.
// Errors are Redis's, unwrapped.
func (r *Redis) claim(ctx context.Context, now time.Time) (ids []string, until int64, err error) {
	nowMs := now.UnixMilli()
	until = nowMs + r.claimTTL.Milliseconds()
	ids, err = claimScript.Run(ctx, r.client, []string{r.keys.Schedule()}, nowMs, until, r.batch).StringSlice()
	return ids, until, err
}

// earliest returns the earliest entry's score as a time; found is false when the ZSET is
// empty. Errors are Redis's, unwrapped.
func (r *Redis) earliest(ctx context.Context) (at time.Time, found bool, err error) {
	zs, err := r.client.ZRangeWithScores(ctx, r.keys.Schedule(), 0, 0).Result()
	if err != nil || len(zs) == 0 {
		return time.Time{}, false, err
	}
	return time.UnixMilli(int64(zs[0].Score)), true, nil
}

// dispatch calls due for each claimed id in a goroutine of its own, except for an id whose
// call still runs in this process (its claim expired meanwhile: the new claim only extends
// it). Nothing is called once ctx is done: the claims expire after ClaimTTL.
func (r *Redis) dispatch(ctx context.Context, due Due, ids []string, until int64) {
	if ctx.Err() != nil {
		return
	}
	for _, id := range ids {
		r.mu.Lock()
		_, busy := r.inflight[id]
		r.inflight[id] = struct{}{}
		r.mu.Unlock()
		if !busy {
			r.calls.Go(func() { r.call(ctx, due, id, until) })
		}
	}
}

// call runs due for planID and acknowledges its claim when due succeeds (ack.lua); on
// error the entry stays claimed and is due again after ClaimTTL.
func (r *Redis) call(ctx context.Context, due Due, planID string, until int64) {
	defer func() {
		r.mu.Lock()
		delete(r.inflight, planID)
		r.mu.Unlock()
	}()
	if err := due(ctx, planID); err != nil {
		r.log.Warn("schedule: starting a scheduled plan failed; it is due again after the claim TTL",
			"plan", planID, "claim_ttl", r.claimTTL, "err", fmt.Errorf("schedule: due %s: %w", planID, err))
		return
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout)
	defer cancel()
	if err := ackScript.Run(actx, r.client, []string{r.keys.Schedule()}, planID, until).Err(); err != nil {
		r.log.Warn("schedule: acknowledging a started plan failed; its entry is due again after the claim TTL",
			"plan", planID, "claim_ttl", r.claimTTL, "err", fmt.Errorf("schedule: ack %s: %w", planID, err))
	}
}

// trouble logs a failed Redis call of the loop, once per outage (then at debug level), and
// returns false. Errors caused by Stop are not logged.
func (r *Redis) trouble(ctx context.Context, what string, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	if r.failing {
		r.log.Debug("schedule: Redis still unavailable", "op", what, "err", err)
		return false
	}
	r.failing = true
	r.log.Warn("schedule: Redis unavailable; due plans start when it answers again",
		"op", what, "err", fmt.Errorf("schedule: %s: %w", what, err))
	return false
}

// recovered notes a pass without Redis errors, logging the end of an outage.
func (r *Redis) recovered() {
	if r.failing {
		r.failing = false
		r.log.Info("schedule: Redis answers again")
	}
}
