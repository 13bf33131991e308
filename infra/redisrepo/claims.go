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

// claim marks every task's tenant as taken by that task (claim_tenant.lua on the tenant's
// active marker, pipelined; a claim retried after a lost reply finds itself and succeeds). When a tenant is taken already, it releases what it claimed and returns
// a *task.BusyError: across executors, exactly one of two plans for one tenant gets it.
func (s *Store) claim(ctx context.Context, tasks []*task.Task) error {
	var busy []string
	var claimed []*task.Task
	for start := 0; start < len(tasks); start += batchSize {
		batch := tasks[start:min(start+batchSize, len(tasks))]
		cmds := make([]*redis.Cmd, len(batch))
		_, err := s.exec(ctx, func(pipe redis.Pipeliner) {
			for i, t := range batch {
				cmds[i] = claimTenantScript.Eval(ctx, pipe, []string{s.keys.TenantActive(t.TenantID())}, t.ID(), int64(claimTTL/time.Second))
			}
		})
		if err != nil {
			s.release(ctx, claimed)
			return wrap("claim tenants", err)
		}
		for i, t := range batch {
			if n, _ := cmds[i].Int(); n == 1 {
				claimed = append(claimed, t)
			} else {
				busy = append(busy, t.TenantID())
			}
		}
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
			releaseTenantScript.Eval(ctx, pipe, []string{s.keys.TenantActive(t.TenantID())}, t.ID()) // EVAL: no NOSCRIPT in a pipeline
		}
	})
}
