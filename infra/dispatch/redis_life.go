package dispatch

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	// subscribeWait is how long Start waits for the wake channel's subscription.
	subscribeWait = 2 * time.Second
	// drainWait bounds how long Stop waits for the wake reader to wind down.
	drainWait = 5 * time.Second
	// wakeBuffer is the capacity of go-redis's channel of wake messages.
	wakeBuffer = 64
)

// Start subscribes to the wake channel (executor:dispatch:wake) and forwards every message,
// and every re-subscription after a reconnection (messages may have been missed meanwhile),
// to Woken, in a goroutine of its own, until Stop. It returns once the subscription is
// confirmed or, when Redis does not answer, after about 2 s or when ctx ends (go-redis keeps
// trying in the background); it never fails. Only the first Start has an effect; a stopped
// Redis is not started again.
func (r *Redis) Start(ctx context.Context) error {
	r.life.Lock()
	defer r.life.Unlock()
	if r.started {
		return nil
	}
	r.started = true
	r.done = make(chan struct{})
	subCtx, cancel := context.WithTimeout(ctx, subscribeWait)
	defer cancel()
	// The subscription's confirmation (a *redis.Subscription) is the first thing on the
	// channel; another one follows every reconnection.
	r.ps = r.client.Subscribe(subCtx, r.keys.DispatchWake())
	ch := r.ps.ChannelWithSubscriptions(redis.WithChannelSize(wakeBuffer))
	select {
	case <-ch:
	case <-subCtx.Done():
		r.log.Warn("dispatch: wake channel not subscribed yet (Redis unavailable?); retrying in the background",
			"channel", r.keys.DispatchWake())
	}
	go r.forward(ch)
	return nil
}

// forward hands every wake message, and every subscription that follows (a reconnection, or
// the first one when Start did not see it: messages may have been missed), to Woken until
// go-redis closes ch (Stop closes the subscription).
func (r *Redis) forward(ch <-chan any) {
	defer close(r.done)
	for range ch {
		signal(r.woken)
	}
}

// Stop ends the subscription and waits for its reader (at most about 5 s, or until ctx
// ends: then it returns ctx's error, and the reader returns by itself once go-redis closes
// its channel). Stop is idempotent; stopping a Redis that was never started does nothing.
// The queue's operations still work after Stop; only the wake-ups of other executors'
// changes end. A failure to close the subscription is logged, not returned.
func (r *Redis) Stop(ctx context.Context) error {
	r.life.Lock()
	defer r.life.Unlock()
	if !r.started || r.stopped {
		return nil
	}
	r.stopped = true
	if err := r.ps.Close(); err != nil {
		r.log.Warn("dispatch: close the wake subscription", "err", err)
	}
	timer := time.NewTimer(drainWait)
	defer timer.Stop()
	select {
	case <-r.done:
	case <-timer.C:
		r.log.Warn("dispatch: the wake channel's reader did not stop in time")
	case <-ctx.Done():
		return fmt.Errorf("dispatch: stop: %w", ctx.Err())
	}
	return nil
}
