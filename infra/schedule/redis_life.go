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

// SetDue sets the callback that starts the plans whose time has come; call it before Start.
func (r *Redis) SetDue(due Due) {
	r.life.Lock()
	defer r.life.Unlock()
	r.due = due
}

// Start subscribes to the wake channel, then runs the loop that claims due entries and
// calls Due (see SetDue) for each, in a goroutine of its own, until Stop. It returns once the
// subscription is confirmed or, when Redis does not answer, after about 2 s or when ctx ends:
// the subscription and the loop then keep trying in the background (go-redis re-subscribes by
// itself, and the loop checks the ZSET every 250 ms while Redis fails). ctx passes its values
// on to the Due calls. It fails when SetDue was not called. Only the first Start of a Redis
// has an effect; a stopped Redis is not started again.
func (r *Redis) Start(ctx context.Context) error {
	r.life.Lock()
	defer r.life.Unlock()
	if r.started {
		return nil
	}
	if r.due == nil {
		return errNoDue
	}
	r.started = true
	loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
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
	go r.loop(loopCtx, r.due, r.wake)
	return nil
}

// Stop stops the loop and the subscription, cancels the context given to Due calls and
// waits for them to return, or gives up when ctx ends (they return by themselves then, being
// cancelled). An entry whose Due call did not succeed stays claimed in Redis and is due again
// after ClaimTTL, for any instance. Entries still kept in memory because Redis was away are
// lost (logged). Stop is idempotent; stopping a Redis that was never started does nothing.
func (r *Redis) Stop(ctx context.Context) error {
	r.life.Lock()
	defer r.life.Unlock()
	if !r.started || r.stopped {
		return nil
	}
	r.stopped = true
	r.cancel()
	err := awaitClosed(ctx, r.done)
	_ = r.ps.Close()
	if err != nil {
		return err
	}
	r.drainWake(ctx)
	if err := awaitCalls(ctx, &r.calls); err != nil {
		return err
	}
	if n := r.pendingCount(); n > 0 {
		r.log.Warn("schedule: stopped with entries Redis never took; they are lost", "entries", n)
	}
	return nil
}

// drainWake reads the wake channel until go-redis closes it, so that its reader goroutine
// is never left blocked on a send; it gives up after drainWait, or when ctx ends.
func (r *Redis) drainWake(ctx context.Context) {
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
		case <-ctx.Done():
			return
		}
	}
}
