package redisrepo

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/domain/task"
)

// claimTTL bounds how long a claim outlives an executor that died before it finished writing
// a plan: the tenants are free again after it. Once written, a claim lives as long as its task.
const claimTTL = 10 * time.Minute

// claim marks every task's tenant as taken by that task: SET NX of the tenant's active marker,
// pipelined; a marker that was there already is read back, and one that names this task is
// this claim's own (its first try's reply was lost, and go-redis sent it again). When a tenant
// is taken by another task, it releases what it claimed and returns a *task.BusyError: across
// executors, exactly one of two plans for one tenant gets it.
func (s *Store) claim(ctx context.Context, tasks []*task.Task) error {
	got := make([]bool, len(tasks))
	err := inBatches(ctx, len(tasks), batchSize, func(ctx context.Context, start, end int) error {
		batch := tasks[start:end]
		set := make([]*redis.BoolCmd, len(batch))
		if _, err := s.exec(ctx, func(pipe redis.Pipeliner) {
			for i, t := range batch {
				set[i] = pipe.SetNX(ctx, s.keys.TenantActive(t.TenantID()), t.ID(), claimTTL)
			}
		}); err != nil {
			return err
		}
		var taken []int // markers that were there: whose are they?
		for i, c := range set {
			if got[start+i] = c.Val(); !got[start+i] {
				taken = append(taken, i)
			}
		}
		if len(taken) == 0 {
			return nil
		}
		holder := make([]*redis.StringCmd, len(taken))
		if _, err := s.exec(ctx, func(pipe redis.Pipeliner) {
			for j, i := range taken {
				holder[j] = pipe.Get(ctx, s.keys.TenantActive(batch[i].TenantID()))
			}
		}); err != nil {
			return err
		}
		for j, i := range taken {
			got[start+i] = holder[j].Val() == batch[i].ID()
		}
		return nil
	})
	var busy []string
	var claimed []*task.Task
	for i, t := range tasks {
		if got[i] {
			claimed = append(claimed, t)
		} else {
			busy = append(busy, t.TenantID())
		}
	}
	if err != nil {
		s.release(ctx, claimed)
		return wrap("claim tenants", err)
	}
	if len(busy) > 0 {
		s.release(ctx, claimed)
		return &task.BusyError{Tenants: busy}
	}
	return nil
}

// release frees the tenants of tasks that no longer hold them (best effort: a claim that
// cannot be released expires).
func (s *Store) release(ctx context.Context, tasks []*task.Task) {
	if len(tasks) == 0 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	_, _ = s.exec(ctx, func(pipe redis.Pipeliner) {
		for _, t := range tasks {
			releaseTenantScript.Eval(ctx, pipe, s.tenantKeys(t), t.ID()) // EVAL: no NOSCRIPT in a pipeline
		}
	})
}
