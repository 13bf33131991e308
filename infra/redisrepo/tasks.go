package redisrepo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/cas"
	"github.com/executor-dev/executor/infra/outage"
)

// createOnline claims the tasks' tenants (a *task.BusyError when one is taken), then writes the
// tasks (fence 0) and points each tenant's index at its task, in pipelined batches of
// batchSize commands: one round trip per batch, not per tenant.
func (r *TaskRepo) createOnline(ctx context.Context, tasks []*task.Task) error {
	return r.s.create(ctx, nil, tasks)
}

// reactivateOnline makes t its tenant's active task again in Redis (reactivate.lua).
func (r *TaskRepo) reactivateOnline(ctx context.Context, t *task.Task) error {
	s := r.s
	if err := s.watch.claimsAllowed(ctx); err != nil {
		return err
	}
	keys := []string{s.keys.TenantIndex(t.TenantID()), s.keys.TenantActive(t.TenantID())}
	n, err := reactivateScript.Run(ctx, s.client, keys, t.ID()).Int()
	if err != nil {
		return wrap("reactivate task", err)
	}
	if n == 0 {
		return &task.BusyError{Tenants: []string{t.TenantID()}}
	}
	return nil
}

// taskOnline returns the task with id as Redis holds it.
func (r *TaskRepo) taskOnline(ctx context.Context, id string) (*task.Task, error) {
	h, err := r.s.client.HGetAll(ctx, r.s.keys.Task(id)).Result()
	if err != nil {
		return nil, wrap("read task", err)
	}
	return r.hydrate(ctx, id, h)
}

// hydrate decodes a task hash read from Redis and records it in the mirror, unless the
// mirror meanwhile got a newer version (a write that raced this read), or this executor is
// writing the task (see inflight): the mirror's copy, when newer, is returned instead.
func (r *TaskRepo) hydrate(ctx context.Context, id string, h map[string]string) (*task.Task, error) {
	t, err := r.decode(ctx, id, h)
	if err != nil {
		return nil, err
	}
	if r.s.writing.has(id) {
		return r.s.mirror.Tasks().Newest(t), nil
	}
	return r.s.mirror.Tasks().PutIfNewer(t), nil
}

// decode rebuilds a task from its hash, with the stage template of its plan.
func (r *TaskRepo) decode(ctx context.Context, id string, h map[string]string) (*task.Task, error) {
	if len(h) == 0 {
		return nil, r.s.missing(ctx, id)
	}
	stages, err := r.s.stages(ctx, h["planId"])
	if errors.Is(err, plan.ErrNotFound) {
		// Its plan is not written yet (an executor is creating it) or expired: not there.
		return nil, fmt.Errorf("%w: %s", task.ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("redisrepo: plan of task %s: %w", id, err)
	}
	t, err := decodeTask(h, stages)
	if err != nil {
		return nil, fmt.Errorf("redisrepo: decode task %s: %w", id, err)
	}
	return t, nil
}

// latestOnline returns the tenant's latest task, through Redis's index: another executor may have
// given the tenant a newer task.
func (r *TaskRepo) latestOnline(ctx context.Context, tenantID string) (*task.Task, error) {
	id, err := r.s.client.Get(ctx, r.s.keys.TenantIndex(tenantID)).Result()
	if errors.Is(err, redis.Nil) {
		return nil, task.ErrNotFound
	}
	if err != nil {
		return nil, wrap("read tenant index", err)
	}
	t, err := r.taskOnline(ctx, id)
	if err != nil {
		return nil, err
	}
	r.s.mirror.Tasks().PutLatest(tenantID, id)
	r.s.hints.put(tenantID, id)
	return t, nil
}

// latestWithCheckpointOnline reads the tenant's latest task and its checkpoint (nil when it
// has none), with what more queues once the task's id is known (nil: nothing). One round trip
// when the store remembers the tenant's latest task (this executor created, ran or read it:
// hints.go): the index and that task's keys pipelined, the index confirming the guess. Else,
// or when the index names another task (a newer one, given by another executor), two: the
// index, then the task's keys. Either way what is returned is the task the index named.
func (r *TaskRepo) latestWithCheckpointOnline(ctx context.Context, tenantID string, more func(p redis.Pipeliner, id string)) (*task.Task, *checkpoint.Checkpoint, error) {
	s := r.s
	var hget *redis.MapStringStringCmd
	var cget *redis.StringCmd
	reads := func(pipe redis.Pipeliner, id string) {
		hget = pipe.HGetAll(ctx, s.keys.Task(id))
		cget = pipe.Get(ctx, s.keys.Checkpoint(id))
		if more != nil {
			more(pipe, id)
		}
	}
	guess, known := s.hints.get(tenantID)
	var index *redis.StringCmd
	if _, err := s.exec(ctx, func(pipe redis.Pipeliner) {
		index = pipe.Get(ctx, s.keys.TenantIndex(tenantID))
		if known {
			reads(pipe, guess)
		}
	}); err != nil {
		return nil, nil, wrap("read tenant index", err)
	}
	id, err := index.Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil, task.ErrNotFound
	}
	if err != nil {
		return nil, nil, wrap("read tenant index", err)
	}
	if !known || id != guess {
		if _, err := s.exec(ctx, func(pipe redis.Pipeliner) { reads(pipe, id) }); err != nil {
			return nil, nil, wrap("read task", err)
		}
	}
	if err := hget.Err(); err != nil { // not read is not absent (see statusesOnline)
		return nil, nil, wrap("read task", err)
	}
	t, err := r.hydrate(ctx, id, hget.Val())
	if err != nil {
		return nil, nil, err
	}
	s.mirror.Tasks().PutLatest(tenantID, id)
	s.hints.put(tenantID, id)
	cp, err := s.checkpointOf(id, cget)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return t, nil, nil
	}
	return t, cp, err
}

// byIDsOnline returns the tasks with the given ids, in order, read from Redis in pipelined batches.
func (r *TaskRepo) byIDsOnline(ctx context.Context, ids []string) ([]*task.Task, error) {
	s := r.s
	out := make([]*task.Task, len(ids))
	for start := 0; start < len(ids); start += batchSize {
		batch := ids[start:min(start+batchSize, len(ids))]
		cmds, err := s.exec(ctx, func(pipe redis.Pipeliner) {
			for _, id := range batch {
				pipe.HGetAll(ctx, s.keys.Task(id))
			}
		})
		if err != nil {
			return nil, wrap("read tasks", err)
		}
		for j, id := range batch {
			cmd := cmds[j].(*redis.MapStringStringCmd)
			if err := cmd.Err(); err != nil { // not read is not absent (see statusesOnline)
				return nil, wrap("read tasks", err)
			}
			t, err := r.hydrate(ctx, id, cmd.Val())
			if err != nil {
				return nil, err
			}
			out[start+j] = t
		}
	}
	return out, nil
}

// statusesOnline reads the status field of each task, in pipelined batches.
func (r *TaskRepo) statusesOnline(ctx context.Context, ids []string) ([]task.Status, error) {
	s := r.s
	out := make([]task.Status, len(ids))
	for start := 0; start < len(ids); start += batchSize {
		batch := ids[start:min(start+batchSize, len(ids))]
		cmds := make([]*redis.StringCmd, len(batch))
		if _, err := s.exec(ctx, func(pipe redis.Pipeliner) {
			for i, id := range batch {
				cmds[i] = pipe.HGet(ctx, s.keys.Task(id), "status")
			}
		}); err != nil {
			return nil, wrap("read task statuses", err)
		}
		for i, id := range batch {
			// Each command's own error: the pipeline's is its first failed command's, and
			// exec clears a redis.Nil (a task really gone, earlier in the batch), so a command
			// that failed after it (CLUSTERDOWN, a reset during a failover) would read as "".
			// A task not read is an outage (503), never a MISSING task.
			if err := cmds[i].Err(); err != nil && !errors.Is(err, redis.Nil) {
				return nil, wrap("read task statuses", err)
			}
			st := task.Status(cmds[i].Val())
			if st == "" {
				return nil, s.missing(ctx, id)
			}
			if !st.Valid() {
				return nil, fmt.Errorf("redisrepo: task %s: unknown status %q", id, st)
			}
			out[start+i] = st
		}
	}
	return out, nil
}

// saveOnline writes t and, when cp is not nil, its checkpoint with one command: save_task.lua, a
// compare-and-set on t's fence epoch and version, given only the fields changed since the
// version this executor last wrote or read whole (writtenFields), on the batched client. A
// superseded epoch writes nothing and returns task.ErrFenced; another writer's change since
// t was read writes nothing and returns task.ErrConflict. On success t carries the new
// version. The end of a task also frees its tenant. TTLs are left as they are (a plan's keys
// have none while it is active; see retention.go).
func (r *TaskRepo) saveOnline(ctx context.Context, t *task.Task, cp *checkpoint.Checkpoint, token string) error {
	s := r.s
	fields, err := runFields(t, s.written.ledgerLen(t.ID(), t.Fence(), t.Version()))
	if err != nil {
		return wrap("encode task", err)
	}
	cpJSON := ""
	if cp != nil {
		b, err := encCheckpoint(cp)
		if err != nil {
			return wrap("encode checkpoint", err)
		}
		cpJSON = string(b)
	}
	keys := []string{s.keys.Task(t.ID()), s.keys.Checkpoint(t.ID())}
	args := make([]any, 4, 4+2*(nRunFields+len(fields.ledger)))
	args[0], args[1], args[2], args[3] = t.Fence(), cpJSON, t.Version(), token
	wasRunning := s.written.running(t.ID(), t.Fence(), t.Version())
	args, sent := s.written.diff(t.ID(), t.Fence(), t.Version(), &fields, args)
	res := saveTaskScript.Run(ctx, s.batched, keys, args...)
	n, err := res.Int()
	if err != nil {
		s.back.inDoubt(t.ID(), token)
	}
	if err != nil || n != saved || t.Status() != task.Running {
		s.written.forget(t.ID())
	} else {
		s.written.record(t.ID(), t.Fence(), t.Version()+1, &fields, sent)
	}
	if err != nil {
		return wrap("save task", err)
	}
	switch n {
	case saved:
	case fenced:
		s.mirror.Tasks().Forget(t.ID()) // our copy is stale: read the newer run's next time
		return task.ErrFenced
	case conflict:
		s.mirror.Tasks().Forget(t.ID())
		return fmt.Errorf("redisrepo: save task %s: %w", t.ID(), task.ErrConflict)
	case behind: // this executor's copy is the newest: written back (change journals it)
		s.watch.rollback.Store(true) // the other executors must learn of it too
		return fmt.Errorf("redisrepo: save task %s: Redis holds an older version than %d: %w", t.ID(), t.Version(), outage.ErrDataLost)
	case noSuchTask:
		return s.missing(ctx, t.ID())
	default:
		return fmt.Errorf("redisrepo: save task %s: save_task.lua answered %d", t.ID(), n)
	}
	t.Stored(t.Version() + 1)
	s.mirror.Tasks().Put(t, cp)
	if wasRunning {
		s.index.deferRow(t) // a RUNNING task's next row: see planIndex.deferRow
	} else {
		s.index.write(ctx, t)
	}
	if t.Status().Terminal() { // the tenant is free for its next task
		if err := releaseTenantScript.Run(ctx, s.batched, s.tenantKeys(t), t.ID()).Err(); err != nil {
			return wrap("release tenant", err)
		}
	}
	return nil
}

// updateOnline reads the task from Redis, applies fn and saves it; on a conflict it reads
// again and applies fn again.
func (r *TaskRepo) updateOnline(ctx context.Context, id string, fn func(t *task.Task) (*checkpoint.Checkpoint, error)) (*task.Task, error) {
	var cp *checkpoint.Checkpoint
	return cas.Update(func() (*task.Task, error) { return r.taskOnline(ctx, id) },
		func(t *task.Task) (err error) { cp, err = fn(t); return err },
		func(t *task.Task) error { return r.saveOnline(ctx, t, cp, r.s.token()) }, task.ErrConflict)
}

// tenantKeys are release_tenant.lua's KEYS for t's tenant.
func (s *Store) tenantKeys(t *task.Task) []string {
	return []string{s.keys.TenantActive(t.TenantID()), s.keys.TenantIndex(t.TenantID())}
}

// bumpFenceOnline raises the task's fence epoch in Redis and returns the task as Redis holds it at
// that epoch (bump_fence.lua: both in one atomic step), replacing the mirror's copy.
func (r *TaskRepo) bumpFenceOnline(ctx context.Context, id, token string) (*task.Task, error) {
	s := r.s
	// A retry of this bump (after a lost reply) bumps nothing twice: token is the bump's own.
	flat, err := bumpFenceScript.Run(ctx, s.batched, []string{s.keys.Task(id)}, token).StringSlice()
	if err != nil {
		s.back.inDoubt(id, token)
		return nil, wrap("bump fence", err)
	}
	if len(flat) == 0 {
		return nil, s.missing(ctx, id)
	}
	h := make(map[string]string, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		h[flat[i]] = flat[i+1]
	}
	t, err := r.decode(ctx, id, h)
	if err != nil {
		return nil, err
	}
	s.mirror.Tasks().Put(t, nil)
	s.hints.put(t.TenantID(), id)                 // this executor runs the tenant: queries may find it here
	s.written.seed(id, t.Fence(), t.Version(), h) // the run's writes send only what changes from here
	return t, nil
}

// missing explains a write that found no task in Redis: if this executor holds the task, Redis
// lost it (it restarted empty unnoticed), an outage calling for a full write-back; else the
// task does not exist.
func (s *Store) missing(ctx context.Context, id string) error {
	// A task that has not ended never expires (nor does anything of its plan): gone, it was lost.
	if t, err := s.mirror.Tasks().Task(ctx, id); err == nil && (!t.Status().Terminal() || time.Since(t.UpdatedAt()) < s.ttl) {
		return fmt.Errorf("redisrepo: task %s: %w", id, outage.ErrDataLost)
	}
	return fmt.Errorf("%w: %s", task.ErrNotFound, id)
}
