package schedule

import (
	"context"
	"maps"
)

// pendingOp is a write of one entry that Redis did not take yet (it was away): a schedule
// at a time, or a removal.
type pendingOp struct {
	at     int64 // startAt in Unix milliseconds, for a schedule
	remove bool
	seq    uint64 // tells a later op for the same id from the one being written
}

// queue records op for planID, replacing any op queued for it, and wakes the loop to write
// it soon.
func (r *Redis) queue(planID string, op pendingOp) {
	r.mu.Lock()
	r.seq++
	op.seq = r.seq
	r.pending[planID] = op
	r.mu.Unlock()
	select {
	case r.poke <- struct{}{}:
	default:
	}
}

// queueIfPending queues op for planID when an op is queued for it already, and reports
// whether it did.
func (r *Redis) queueIfPending(planID string, op pendingOp) bool {
	r.mu.Lock()
	_, ok := r.pending[planID]
	r.mu.Unlock()
	if ok {
		r.queue(planID, op)
	}
	return ok
}

// unqueue turns an op queued for planID into a removal; ok is false when none was queued.
// had reports whether the queued op was a schedule.
func (r *Redis) unqueue(planID string) (had, ok bool) {
	r.mu.Lock()
	op, ok := r.pending[planID]
	r.mu.Unlock()
	if !ok {
		return false, false
	}
	r.queue(planID, pendingOp{remove: true})
	return !op.remove, true
}

// pendingCount returns how many ops wait for Redis.
func (r *Redis) pendingCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending)
}

// flush writes the queued ops to Redis, stopping at the first error (returned unwrapped).
// An op written is dropped from the queue unless a newer one replaced it meanwhile.
func (r *Redis) flush(ctx context.Context) error {
	r.mu.Lock()
	ops := maps.Clone(r.pending)
	r.mu.Unlock()
	for id, op := range ops {
		var err error
		if op.remove {
			err = r.client.ZRem(ctx, r.keys.Schedule(), id).Err()
		} else {
			err = r.write(ctx, id, op.at)
		}
		if err != nil {
			return err
		}
		r.mu.Lock()
		if cur, ok := r.pending[id]; ok && cur.seq == op.seq {
			delete(r.pending, id)
		}
		r.mu.Unlock()
	}
	if len(ops) > 0 {
		r.log.Info("schedule: entries kept in memory during the Redis outage are written",
			"entries", len(ops))
	}
	return nil
}
