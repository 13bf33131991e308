package schedule

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	// subscribeWait is how long Start waits for the wake channel's subscription.
	subscribeWait = 2 * time.Second
	// drainWait bounds how long Stop waits for the pub/sub reader to wind down.
	drainWait = 5 * time.Second
	// wakeBuffer is the capacity of the Go channel of wake messages.
	wakeBuffer = 64
)

// Start subscribes to the wake channel, then runs the loop that claims due entries and
// calls due for each, in a goroutine of its own. It returns once the subscription is
// confirmed or, when Redis does not answer, after about 2 s: the subscription and the loop
// then keep trying in the background (go-redis re-subscribes by itself, and the loop checks
// the ZSET every 250 ms while Redis fails). Only the first Start of a Redis has an effect; a
// stopped Redis is not started again.
func (r *Redis) Start(due Due) {
	r.life.Lock()
	defer r.life.Unlock()
	if r.started {
		return
	}
	r.started = true
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan struct{})

	subCtx, subCancel := context.WithTimeout(ctx, subscribeWait)
	defer subCancel()
	// The subscription's confirmation (a *redis.Subscription) is the first thing on the
	// channel; another one follows every reconnection.
	r.ps = r.client.Subscribe(subCtx, r.keys.ScheduleWake())
	r.wake = r.ps.ChannelWithSubscriptions(redis.WithChannelSize(wakeBuffer))
	select {
	case <-r.wake:
		// Confirmed; the loop's first pass looks at the ZSET anyway.
	case <-subCtx.Done():
		r.log.Warn("schedule: wake channel not subscribed yet (Redis unavailable?); retrying in the background",
			"channel", r.keys.ScheduleWake())
	}
	go r.loop(ctx, due, r.wake)
}

// Stop stops the loop and the subscription, cancels the context given to Due calls and
// waits for them to return. An entry whose Due call did not succeed stays claimed in Redis
// and is due again after ClaimTTL, for any instance. Entries still kept in memory because
// Redis was away are lost (logged). Stop is idempotent; stopping a Redis that was never
// started does nothing.
func (r *Redis) Stop() {
	r.life.Lock()
	defer r.life.Unlock()
	if !r.started || r.stopped {
		return
	}
	r.stopped = true
	r.cancel()
	<-r.done
	_ = r.ps.Close()
	r.drainWake()
	r.calls.Wait()
	if n := r.pendingCount(); n > 0 {
		r.log.Warn("schedule: stopped with entries Redis never took; they are lost", "entries", n)
	}
}

// drainWake reads the wake channel until go-redis closes it, so that its reader goroutine
// is never left blocked on a send.
func (r *Redis) drainWake() {
	timer := time.NewTimer(drainWait)
	defer timer.Stop()
	for {
		select {
		case _, ok := <-r.wake:
			if !ok {
				return
			}
		case <-timer.C:
			r.log.Warn("schedule: the wake channel's reader did not stop in time")
			return
		}
	}
}
