package lock

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/domain/lease"
)

//go:embed scripts/force_release.lua
var forceReleaseSrc string

// forceReleaseScript deletes a lease key, answers its value and PTTL, and leaves the
// tombstone of that value, atomically.
var forceReleaseScript = redis.NewScript(forceReleaseSrc)

// MinTombstoneTTL is the least time the tombstone of a force-released lease lives
// (Keys.TenantLockReleased): long enough for every holder's watchdog to see it, even with a
// lease TTL of its own longer than the releasing locker's.
const MinTombstoneTTL = time.Minute

// tombstoneTTL is how long the tombstone of a lease force-released by r lives at least:
// three lease TTLs, and at least MinTombstoneTTL. The script raises it to three times the
// removed key's time left.
func (r *Redis) tombstoneTTL() time.Duration { return max(3*r.ttl, MinTombstoneTTL) }

var _ interface {
	ForceRelease(context.Context, string) (lease.Holder, bool, error)
} = (*Redis)(nil)

var _ interface {
	ForceRelease(context.Context, string) (lease.Holder, bool, error)
} = (*Memory)(nil)

var _ interface {
	ForceRelease(context.Context, string) (lease.Holder, bool, error)
} = (*Failover)(nil)

// ForceRelease removes tenantID's lease whoever holds it (an operator's unlock) and returns the
// holder it removed; ok is false when nobody held it. The holder finds out at its next refresh
// (Redis) or at once (in-process): its Lost channel closes, so its run is cancelled.
//
// The key is read (value and PTTL) and deleted in one script, so the holder returned is
// exactly the one removed, with the time it had left (0 for a key without expiry). The same
// script leaves a tombstone, Keys.TenantLockReleased, holding the value removed, for three
// lease TTLs (of this locker, or of the removed key's time left, whichever is longer) and
// at least MinTombstoneTTL. A RedisLease finds the key gone at its next refresh, within
// TTL/3, and is lost; its Release afterwards deletes nothing, since its token no longer
// matches any key. A FailoverLease, of this process or another, finds the key gone at its
// next tick and, seeing the tombstone of its own value, is lost instead of taking the key
// back as it does after an emptied Redis. The tombstone blocks no one: the tenant may be
// acquired again at once, and a lease with another value never takes it for its own.
func (r *Redis) ForceRelease(ctx context.Context, tenantID string) (lease.Holder, bool, error) {
	key := r.keys.TenantLock(tenantID)
	val, left, held, err := r.remove(ctx, key, r.keys.TenantLockReleased(tenantID))
	if err != nil {
		return lease.Holder{}, false, fmt.Errorf("lock: force-release tenant %s: %w", tenantID, err)
	}
	if !held {
		return lease.Holder{}, false, nil
	}
	h := lease.Holder{Owner: ownerOf(val), TTL: left}
	r.log.Warn("lock: lease force-released", "tenant", tenantID, "owner", h.Owner, "key", key, "expires_in", h.TTL)
	return h, true, nil
}

// remove deletes key, leaves tombstone holding its value (see ForceRelease), and returns the
// value and time left it had, like read; held is false when the key did not exist, and no
// tombstone is left then. redis.Nil never leaves remove; other errors are Redis's,
// unwrapped, or a reply of an unexpected shape.
func (r *Redis) remove(ctx context.Context, key, tombstone string) (val string, left time.Duration, held bool, err error) {
	reply, err := forceReleaseScript.Run(ctx, r.client, []string{key, tombstone},
		r.tombstoneTTL().Milliseconds()).Slice()
	if errors.Is(err, redis.Nil) {
		return "", 0, false, nil
	}
	if err != nil {
		return "", 0, false, err
	}
	if len(reply) != 2 {
		return "", 0, false, fmt.Errorf("unexpected reply %v", reply)
	}
	val, okVal := reply[0].(string)
	ms, okTTL := reply[1].(int64)
	if !okVal || !okTTL {
		return "", 0, false, fmt.Errorf("unexpected reply %v", reply)
	}
	if ms < 0 { // -1: the key had no expiry
		ms = 0
	}
	return val, time.Duration(ms) * time.Millisecond, true, nil
}

// ForceRelease removes tenantID's lease whoever holds it (an operator's unlock) and returns the
// holder it removed; ok is false when nobody held it. The holder finds out at its next refresh
// (Redis) or at once (in-process): its Lost channel closes, so its run is cancelled.
//
// The holder's TTL is 0: in-process leases never expire. The removed lease's Release
// afterwards is harmless: it frees nothing, not even a lease the tenant was given since.
func (m *Memory) ForceRelease(_ context.Context, tenantID string) (lease.Holder, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.held[tenantID]
	if !ok {
		return lease.Holder{}, false, nil
	}
	delete(m.held, tenantID)
	l.loss.fire() // once: l is no longer in held, so no later ForceRelease finds it
	return lease.Holder{Owner: l.owner}, true, nil
}

// ForceRelease removes tenantID's lease whoever holds it (an operator's unlock) and returns the
// holder it removed; ok is false when nobody held it. The holder finds out at its next refresh
// (Redis) or at once (in-process): its Lost channel closes, so its run is cancelled.
//
// It first removes the in-process lease, so a FailoverLease of this process is lost at once
// and never takes the key again; then, unless the monitor says Redis is down, it deletes the
// tenant's Redis key and leaves its tombstone as Redis.ForceRelease does, so a FailoverLease
// of another process is lost at its next tick instead of taking the key back. The holder
// returned is Redis's (owner, time left) when there was a key, else the in-process one (TTL
// 0). As for Holder, a connectivity error is reported to the monitor and answered from
// memory: a key in a Redis nobody reaches is refreshed by no one and expires by itself; a
// lease of another process that still reaches Redis keeps it, since no tombstone is left
// without a key removed. Any other Redis error is returned, the in-process lease (if any)
// being removed already; calling ForceRelease again finishes the job.
func (f *Failover) ForceRelease(ctx context.Context, tenantID string) (lease.Holder, bool, error) {
	// Memory before Redis: a watchdog step that finds the key gone then also finds the
	// in-process lease gone, and does not take the key again (FailoverLease.step).
	mh, mok, _ := f.mem.ForceRelease(ctx, tenantID) // never fails
	if mok {
		f.redis.log.Warn("lock: in-process lease force-released", "tenant", tenantID, "owner", mh.Owner)
	}
	if down, _ := f.mon.Degraded(); down {
		return mh, mok, nil
	}
	rh, rok, err := f.redis.ForceRelease(ctx, tenantID)
	switch {
	case err == nil && rok:
		return rh, true, nil
	case err == nil, ctx.Err() == nil && f.mon.Fail(err):
		return mh, mok, nil
	default:
		return lease.Holder{}, false, err // already "lock: force-release tenant ...: %w"
	}
}
