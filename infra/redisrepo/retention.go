package redisrepo

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// A plan's keys live as long as the plan is active: the plan hash, its tasks, their
// checkpoints and transcripts, and the tenant indexes that point at them have no TTL from
// their creation on. When the plan ends, its keys get the retention (Options.TTL) from that
// moment; when an ended plan is active again (a retry), they lose it. Whatever the status of
// its tasks (queued, waiting at a gate, paused) and however long it is scheduled ahead,
// nothing of an active plan expires.

// retentionOf is the TTL a write gives a key of p: none (0) while p is active, the retention
// once it ended.
func (s *Store) retentionOf(p *plan.Plan) int64 {
	if p.Status().Terminal() {
		return s.ttlSeconds()
	}
	return 0
}

// taskRetention is the TTL the write-back gives t's keys: its plan's (retentionOf), or, when
// this executor does not hold the plan, the retention for an ended task and none otherwise.
func (s *Store) taskRetention(ctx context.Context, t *task.Task) int64 {
	if p, err := s.mirror.Plans().Plan(ctx, t.PlanID()); err == nil {
		return s.retentionOf(p)
	}
	if t.Status().Terminal() {
		return s.ttlSeconds()
	}
	return 0
}

// retain gives p's index and audit keys, and every key of p's tasks (task hash, checkpoint, transcripts, and the tenant
// index where it still points at the task) the TTL ttl seconds, or none when ttl is 0: the
// pass that follows the plan's end (or its return to activity). In pipelined batches: a
// tenant's index needs its tenant id, read from the task first.
func (s *Store) retain(ctx context.Context, p *plan.Plan, ttl int64) error {
	if _, err := s.exec(ctx, func(pipe redis.Pipeliner) {
		for _, k := range []string{s.keys.PlanRows(p.ID()), s.keys.PlanCounts(p.ID()), s.keys.PlanRunning(p.ID()),
			s.keys.Audit(p.ID()), s.keys.AuditOutcomes(p.ID()), s.keys.Notify(p.ID())} {
			if ttl > 0 {
				pipe.Expire(ctx, k, time.Duration(ttl)*time.Second)
			} else {
				pipe.Persist(ctx, k)
			}
		}
	}); err != nil {
		return wrap("retain plan index", err)
	}
	ids := p.TaskIDs()
	for start := 0; start < len(ids); start += batchSize {
		batch := ids[start:min(start+batchSize, len(ids))]
		tenants := make([]*redis.StringCmd, len(batch))
		if _, err := s.exec(ctx, func(pipe redis.Pipeliner) {
			for i, id := range batch {
				tenants[i] = pipe.HGet(ctx, s.keys.Task(id), "tenantId")
				if ttl > 0 {
					pipe.Expire(ctx, s.keys.Task(id), time.Duration(ttl)*time.Second)
					pipe.Expire(ctx, s.keys.Checkpoint(id), time.Duration(ttl)*time.Second)
					pipe.Expire(ctx, s.keys.Transcripts(id), time.Duration(ttl)*time.Second)
				} else {
					pipe.Persist(ctx, s.keys.Task(id))
					pipe.Persist(ctx, s.keys.Checkpoint(id))
					pipe.Persist(ctx, s.keys.Transcripts(id))
				}
			}
		}); err != nil {
			return wrap("retain tasks", err)
		}
		if _, err := s.execScripts(ctx, func(pipe redis.Pipeliner) {
			for i, id := range batch {
				if tenant := tenants[i].Val(); tenant != "" {
					retainIndexScript.EvalSha(ctx, pipe, []string{s.keys.TenantIndex(tenant)}, id, ttl)
				}
			}
		}); err != nil {
			return wrap("retain tenant indexes", err)
		}
	}
	return nil
}
