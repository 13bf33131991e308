package redisrepo

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// CreatePlan stores a new plan with its tasks as one step against every other executor: it
// claims every tenant first (a *task.BusyError, and nothing written, when one is taken), then
// writes the plan, the tasks, and last the tenant index, so a reader that follows an index
// always finds the task and its plan.
func (s *Store) createPlanOnline(ctx context.Context, p *plan.Plan, tasks []*task.Task) error {
	return s.create(ctx, p, tasks)
}

// create claims the tasks' tenants and writes p (when not nil), the tasks and the index, in
// pipelined batches. If a write fails after the claim, the claim is released.
func (s *Store) create(ctx context.Context, p *plan.Plan, tasks []*task.Task) error {
	var planFieldsList []any
	if p != nil {
		var err error
		if planFieldsList, err = planFields(p, p.CreatedAt()); err != nil {
			return wrap("encode plan", err)
		}
	}
	fields := make([][]any, len(tasks))
	for i, t := range tasks {
		f, err := taskFields(t)
		if err != nil {
			return wrap("encode task", err)
		}
		fields[i] = append(withoutEmpty(f), "fence", t.Fence())
	}
	if err := s.watch.claimsAllowed(ctx); err != nil {
		return err
	}
	if err := s.claim(ctx, tasks); err != nil {
		return err
	}
	if err := s.writeNew(ctx, p, planFieldsList, tasks, fields); err != nil {
		s.release(ctx, tasks)
		return err
	}
	if p != nil {
		s.index.created(ctx, tasks) // a new plan: its index is new too
	} else {
		s.index.write(ctx, tasks...)
	}
	if p != nil {
		s.mirror.Plans().Put(p)
	}
	for _, t := range tasks {
		s.mirror.Tasks().Put(t, nil)
		s.mirror.Tasks().PutLatest(t.TenantID(), t.ID())
		s.hints.put(t.TenantID(), t.ID())
	}
	return nil
}

func (s *Store) writeNew(ctx context.Context, p *plan.Plan, planFields []any, tasks []*task.Task, fields [][]any) error {
	if p != nil {
		if _, err := s.execScripts(ctx, func(pipe redis.Pipeliner) {
			s.queuePlan(ctx, pipe, p, base{version: unknownBase}, planStatusPairs, planFields)
		}); err != nil {
			return wrap("create plan", err)
		}
	}
	// Per task: the hash, then the index pointing at it, so that a reader that finds the
	// index finds the task. One pipeline on one node (Redis runs it in order); on a Redis
	// Cluster the two go to different masters, which run their shares of a pipeline at once:
	// the indexes then follow in a pipeline of their own.
	const perTask = 3
	_, cluster := s.client.(*redis.ClusterClient)
	err := inBatches(ctx, len(tasks), batchSize/perTask, func(ctx context.Context, start, end int) error {
		indexes := func(pipe redis.Pipeliner) {
			for _, t := range tasks[start:end] {
				pipe.Set(ctx, s.keys.TenantIndex(t.TenantID()), t.ID(), 0) // no TTL while the plan is active
				pipe.Persist(ctx, s.keys.TenantActive(t.TenantID()))       // the claim now lives as long as its task
			}
		}
		_, err := s.execScripts(ctx, func(pipe redis.Pipeliner) {
			for i, t := range tasks[start:end] {
				createTaskScript.EvalSha(ctx, pipe, []string{s.keys.Task(t.ID())}, fields[start+i]...)
			}
			if !cluster {
				indexes(pipe)
			}
		})
		if err != nil || !cluster {
			return err
		}
		_, err = s.exec(ctx, indexes)
		return err
	})
	if err != nil {
		return wrap("create tasks", err)
	}
	return nil
}

// withoutEmpty drops the pairs of fields whose value is "": a new task has no start, end,
// heartbeat, error or params yet, and create_task.lua writes only a task that does not exist,
// so an absent field reads as the empty one (a write of an existing task must send them all).
func withoutEmpty(fields []any) []any {
	out := fields[:0:0]
	for i := 0; i+1 < len(fields); i += 2 {
		if v, ok := fields[i+1].(string); ok && v == "" {
			continue
		}
		out = append(out, fields[i], fields[i+1])
	}
	return out
}
