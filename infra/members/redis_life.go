package members

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Start registers this executor: it takes its liveness key (SET NX, with the TTL) and writes
// its entry in the executors HASH, then refreshes both every TTL/3 in a goroutine of its own
// until Stop.
//
// It returns an error wrapping ErrNameInUse, registering nothing, when a live executor holds
// the name. When Redis does not answer it logs so and starts the loop anyway, which registers
// the executor once Redis answers (and logs an error then if the name turns out to be taken).
// A Redis is started at most once.
func (r *Redis) Start(ctx context.Context) error {
	r.life.Lock()
	defer r.life.Unlock()
	if r.started {
		return errors.New("members: already started")
	}
	now := time.Now().UTC()
	r.startedAt = now
	key := r.keys.Executor(r.opts.Name)
	hb := marshal(heartbeat{HeartbeatAt: now, Runs: r.opts.Runs(), Instance: r.instance})
	took, err := r.client.SetNX(ctx, key, hb, r.opts.TTL).Result()
	if err == nil && !took {
		took, err = r.ownKey(ctx, key)
	}
	switch {
	case err != nil:
		r.state = beatFailing
		r.opts.Logger.Warn("members: Redis unavailable; this executor registers when it answers",
			"executor_name", r.opts.Name, "err", fmt.Errorf("members: register: %w", err))
	case !took:
		return fmt.Errorf("%w: %q is the name of a live executor (its key %s exists); give this one another --name, or wait until that key expires (at most %s after that executor stopped refreshing it)",
			ErrNameInUse, r.opts.Name, key, r.opts.TTL)
	default:
		if err := r.register(ctx, now, r.opts.Runs()); err != nil {
			r.state = beatFailing
			r.opts.Logger.Warn("members: Redis unavailable; this executor's entry is written at its next refresh",
				"executor_name", r.opts.Name, "err", err)
			break
		}
		r.topologyChecked = true
		if err := r.checkTopology(ctx); err != nil {
			r.leave(ctx)
			return err
		}
	}
	r.started = true
	loopCtx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan struct{})
	go r.loop(loopCtx)
	return nil
}

// Stop stops the refresh loop, then deletes this executor's liveness key (if it is still its
// own) and its entry in the executors HASH: other executors list it no more. The Redis
// errors of that clean-up are returned (the key then expires after the TTL, and the entry is
// pruned later). Stop is idempotent; stopping a registry never started does nothing.
func (r *Redis) Stop(ctx context.Context) error {
	r.life.Lock()
	defer r.life.Unlock()
	if !r.started || r.stopped {
		return nil
	}
	r.stopped = true
	r.cancel()
	select {
	case <-r.done:
	case <-ctx.Done():
		return fmt.Errorf("members: stop: %w", context.Cause(ctx))
	}
	res, err := leaveScript.Run(ctx, r.client, []string{r.keys.Executor(r.opts.Name)}, instanceMarker(r.instance)).Int()
	if err != nil {
		return fmt.Errorf("members: leave: %w", err)
	}
	if res == scriptOthers { // another executor took the name after this one's key expired
		return nil
	}
	if err := r.client.HDel(ctx, r.keys.Executors(), r.opts.Name).Err(); err != nil {
		return fmt.Errorf("members: leave: %w", err)
	}
	return nil
}

// ownKey reports whether the liveness key holds this process's value: a SET NX whose reply
// was lost and that go-redis sent again finds its own key. Errors are Redis's, unwrapped.
func (r *Redis) ownKey(ctx context.Context, key string) (bool, error) {
	cur, err := r.client.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		return false, nil // expired just now: taken by another, or by nobody; refuse anyway
	}
	if err != nil {
		return false, err
	}
	return strings.Contains(cur, instanceMarker(r.instance)), nil
}

// register writes this executor's entry in the executors HASH.
func (r *Redis) register(ctx context.Context, at time.Time, runs int) error {
	reg := registration{Name: r.opts.Name, Address: r.opts.Address, StartedAt: r.startedAt, Version: r.opts.Version,
		HeartbeatAt: at, Runs: runs, Topology: r.opts.Topology, Kinds: r.opts.Kinds}
	if err := r.client.HSet(ctx, r.keys.Executors(), r.opts.Name, marshal(reg)).Err(); err != nil {
		return fmt.Errorf("members: register: %w", err)
	}
	return nil
}
