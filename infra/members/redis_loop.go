package members

import (
	"context"
	"fmt"
	"time"
)

// beatState is what the loop's last refresh found.
type beatState int

const (
	beatOK      beatState = iota // refreshed
	beatFailing                  // Redis did not answer
	beatTaken                    // another process holds the name's liveness key
)

// loop refreshes the registration every TTL/3 until ctx is done, then closes r.done.
func (r *Redis) loop(ctx context.Context) {
	defer close(r.done)
	every := r.opts.TTL / 3
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			// Half the TTL: a slow Redis (seconds of latency) still refreshes the key in time;
			// the ticker drops the ticks a slow beat overlaps.
			bctx, cancel := context.WithTimeout(ctx, r.opts.TTL/2)
			r.beat(bctx)
			cancel()
		}
	}
}

// beat refreshes the liveness key (beat.lua) and then the executor's entry, and logs the
// changes of state: once when Redis stops answering, once when it answers again, once when
// another process holds the name. Errors caused by Stop are not logged.
func (r *Redis) beat(ctx context.Context) {
	now := time.Now().UTC()
	runs := r.opts.Runs()
	hb := marshal(heartbeat{HeartbeatAt: now, Runs: runs, Instance: r.instance})
	res, err := beatScript.Run(ctx, r.client, []string{r.keys.Executor(r.opts.Name)},
		instanceMarker(r.instance), hb, r.opts.TTL.Milliseconds()).Int()
	if err == nil && res == scriptWasGone {
		r.lapsed() // Redis stalled past the TTL, or lost its data
	}
	if err == nil && res != scriptOthers {
		err = r.register(ctx, now, runs)
	} else if err != nil {
		err = fmt.Errorf("members: heartbeat: %w", err)
	}
	switch {
	case err != nil:
		if ctx.Err() != nil && context.Cause(ctx) == context.Canceled {
			return
		}
		if r.state == beatFailing {
			r.opts.Logger.Debug("members: Redis still unavailable", "err", err)
			return
		}
		r.state = beatFailing
		r.opts.Logger.Warn("members: Redis unavailable; this executor's liveness is not refreshed, other executors see it as not alive once its key expires",
			"executor_name", r.opts.Name, "ttl", r.opts.TTL.String(), "err", err)
	case res == scriptOthers:
		if r.state != beatTaken {
			r.state = beatTaken
			r.opts.Logger.Error("members: another executor holds this executor's name; this one is not listed as alive until that one stops",
				"executor_name", r.opts.Name)
		}
	default:
		if r.state != beatOK {
			r.opts.Logger.Info("members: heartbeat written again", "executor_name", r.opts.Name, "key_was_gone", res == scriptWasGone)
		}
		r.state = beatOK
		if !r.topologyChecked {
			// Redis did not answer at Start: the check Start makes comes now, and can only
			// be logged (the executor serves already).
			r.topologyChecked = true
			if err := r.checkTopology(ctx); err != nil {
				r.opts.Logger.Error("members: this executor's topology conflicts with another live executor's; stop one of them", "err", err)
			}
		}
	}
}
