package redisrepo

import (
	"context"
	"errors"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// The repositories' methods: each runs on Redis (the …Online methods), or on the mirror while
// Redis is away, journaling what it changed (gate.go).

// PlanRepo is the Redis plan.Repository.
type PlanRepo struct{ s *Store }

var _ plan.Repository = (*PlanRepo)(nil)

// Create writes a new plan: its hash, its entry in the plans ZSET and its idempotency key.
func (r *PlanRepo) Create(ctx context.Context, p *plan.Plan) error {
	return r.s.change(ctx, func() error { return r.createOnline(ctx, p) },
		func() error { return r.s.mirror.Plans().Create(ctx, p) }, []string{p.ID()}, nil)
}

// Plan returns the plan with id.
func (r *PlanRepo) Plan(ctx context.Context, id string) (*plan.Plan, error) {
	p, err := read(r.s, func() (*plan.Plan, error) { return r.planOnline(ctx, id) },
		func() (*plan.Plan, error) { return r.s.mirror.Plans().Plan(ctx, id) })
	return p, r.s.absent(ctx, err)
}

// ByIdempotencyKey returns the plan first submitted with key (by any executor).
func (r *PlanRepo) ByIdempotencyKey(ctx context.Context, key string) (*plan.Plan, error) {
	p, err := read(r.s, func() (*plan.Plan, error) { return r.byIdempotencyKeyOnline(ctx, key) },
		func() (*plan.Plan, error) { return r.s.mirror.Plans().ByIdempotencyKey(ctx, key) })
	return p, r.s.absent(ctx, err)
}

// List returns plans matching f, newest first (of every executor, while Redis answers).
func (r *PlanRepo) List(ctx context.Context, f plan.Filter) ([]*plan.Plan, error) {
	return read(r.s, func() ([]*plan.Plan, error) { return r.listOnline(ctx, f) },
		func() ([]*plan.Plan, error) { return r.s.mirror.Plans().List(ctx, f) })
}

// Save writes a plan's status fields and refreshes its TTL: a compare-and-set on its version.
func (r *PlanRepo) Save(ctx context.Context, p *plan.Plan) error {
	token := r.s.token() // one write, however often it is sent (see change)
	return r.s.change(ctx, func() error { return r.saveOnline(ctx, p, token) },
		func() error { return r.s.mirror.Plans().Save(ctx, p) }, []string{p.ID()}, nil)
}

// Update applies fn to the plan as stored and saves it, again after losing to another writer.
func (r *PlanRepo) Update(ctx context.Context, id string, fn func(p *plan.Plan) error) (*plan.Plan, error) {
	var out *plan.Plan
	err := r.s.change(ctx, func() (err error) { out, err = r.updateOnline(ctx, id, fn); return err },
		func() (err error) { out, err = r.s.mirror.Plans().Update(ctx, id, fn); return err }, []string{id}, nil)
	return out, err
}

// TaskRepo is the Redis task.Repository.
type TaskRepo struct{ s *Store }

// Peek returns the task as the mirror holds it, or as Redis does when the mirror does not
// know it: a copy that may be stale, for a caller that re-reads it before acting on it (the
// orchestrator's claim: the fence bump that starts a run returns the task as stored).
func (r *TaskRepo) Peek(ctx context.Context, id string) (*task.Task, error) {
	if t, err := r.s.mirror.Tasks().Task(ctx, id); err == nil {
		return t, nil
	}
	return r.Task(ctx, id)
}

var _ task.Repository = (*TaskRepo)(nil)

// Create claims the tasks' tenants (a *task.BusyError when one is taken), then writes the
// tasks and points each tenant's index at its task.
func (r *TaskRepo) Create(ctx context.Context, tasks []*task.Task) error {
	return r.s.change(ctx, func() error { return r.createOnline(ctx, tasks) },
		func() error {
			if err := r.s.watch.claimsPaused(); err != nil {
				return err
			}
			return r.s.mirror.Tasks().Create(ctx, tasks)
		}, nil, taskIDs(tasks))
}

// Reactivate makes t its tenant's active task again. While Redis is away only this
// executor's tasks are checked; the write-back checks the rest.
func (r *TaskRepo) Reactivate(ctx context.Context, t *task.Task) error {
	return r.s.change(ctx, func() error { return r.reactivateOnline(ctx, t) },
		func() error {
			if err := r.s.watch.claimsPaused(); err != nil {
				return err
			}
			return r.s.mirror.Tasks().Reactivate(ctx, t)
		}, nil, nil)
}

// Task returns the task with id.
func (r *TaskRepo) Task(ctx context.Context, id string) (*task.Task, error) {
	t, err := read(r.s, func() (*task.Task, error) { return r.taskOnline(ctx, id) },
		func() (*task.Task, error) { return r.s.mirror.Tasks().Task(ctx, id) })
	return t, r.s.absent(ctx, err)
}

// LatestWithCheckpoint returns the tenant's latest task and its checkpoint (nil when it has
// none), read together: a tenant query waits for one or two round trips, not three
// (latestWithCheckpointOnline).
func (r *TaskRepo) LatestWithCheckpoint(ctx context.Context, tenantID string) (*task.Task, *checkpoint.Checkpoint, error) {
	type both struct {
		t  *task.Task
		cp *checkpoint.Checkpoint
	}
	b, err := read(r.s, func() (both, error) {
		t, cp, err := r.latestWithCheckpointOnline(ctx, tenantID, nil)
		return both{t, cp}, err
	}, func() (both, error) {
		t, cp, err := r.latestWithCheckpointMirror(ctx, tenantID)
		return both{t, cp}, err
	})
	return b.t, b.cp, r.s.absent(ctx, err)
}

// latestWithCheckpointMirror is LatestWithCheckpoint on the mirror (Redis away).
func (r *TaskRepo) latestWithCheckpointMirror(ctx context.Context, tenantID string) (*task.Task, *checkpoint.Checkpoint, error) {
	t, err := r.s.mirror.Tasks().Latest(ctx, tenantID)
	if err != nil {
		return nil, nil, err
	}
	cp, err := r.s.mirror.Checkpoints().Checkpoint(ctx, t.ID())
	if errors.Is(err, checkpoint.ErrNotFound) {
		return t, nil, nil
	}
	return t, cp, err
}

// Statuses returns the statuses of the tasks with the given ids, in that order.
func (r *TaskRepo) Statuses(ctx context.Context, ids []string) ([]task.Status, error) {
	return read(r.s, func() ([]task.Status, error) { return r.statusesOnline(ctx, ids) },
		func() ([]task.Status, error) { return r.s.mirror.Tasks().Statuses(ctx, ids) })
}

// Latest returns the tenant's latest task.
func (r *TaskRepo) Latest(ctx context.Context, tenantID string) (*task.Task, error) {
	t, err := read(r.s, func() (*task.Task, error) { return r.latestOnline(ctx, tenantID) },
		func() (*task.Task, error) { return r.s.mirror.Tasks().Latest(ctx, tenantID) })
	return t, r.s.absent(ctx, err)
}

// ByIDs returns the tasks with the given ids, in order.
func (r *TaskRepo) ByIDs(ctx context.Context, ids []string) ([]*task.Task, error) {
	return read(r.s, func() ([]*task.Task, error) { return r.byIDsOnline(ctx, ids) },
		func() ([]*task.Task, error) { return r.s.mirror.Tasks().ByIDs(ctx, ids) })
}

// Save writes t and, when cp is not nil, its checkpoint, as one compare-and-set on its fence
// epoch and version.
func (r *TaskRepo) Save(ctx context.Context, t *task.Task, cp *checkpoint.Checkpoint) error {
	token := r.s.token() // one write, however often it is sent (see change)
	return r.s.change(ctx, func() error { return r.saveOnline(ctx, t, cp, token) },
		func() error { return r.s.mirror.Tasks().Save(ctx, t, cp) }, nil, []string{t.ID()})
}

// Update applies fn to the task as stored and saves it, again after losing to another writer.
func (r *TaskRepo) Update(ctx context.Context, id string, fn func(t *task.Task) (*checkpoint.Checkpoint, error)) (*task.Task, error) {
	var out *task.Task
	err := r.s.change(ctx, func() (err error) { out, err = r.updateOnline(ctx, id, fn); return err },
		func() (err error) { out, err = r.s.mirror.Tasks().Update(ctx, id, fn); return err }, nil, []string{id})
	return out, err
}

// BumpFence raises the task's fence epoch and returns the task as stored at it.
func (r *TaskRepo) BumpFence(ctx context.Context, id string) (*task.Task, error) {
	var out *task.Task
	token := r.s.token() // one bump, however often it is sent (see change)
	err := r.s.change(ctx, func() (err error) { out, err = r.bumpFenceOnline(ctx, id, token); return err },
		func() (err error) { out, err = r.s.mirror.Tasks().BumpFence(ctx, id); return err }, nil, []string{id})
	return out, err
}

// CheckpointStore is the Redis checkpoint.Store.
type CheckpointStore struct{ s *Store }

var _ checkpoint.Store = (*CheckpointStore)(nil)

// Checkpoint returns the task's checkpoint.
func (c *CheckpointStore) Checkpoint(ctx context.Context, taskID string) (*checkpoint.Checkpoint, error) {
	return read(c.s, func() (*checkpoint.Checkpoint, error) { return c.checkpointOnline(ctx, taskID) },
		func() (*checkpoint.Checkpoint, error) { return c.s.mirror.Checkpoints().Checkpoint(ctx, taskID) })
}

// CreatePlan stores a new plan with its tasks as one step against every other executor (see
// createPlanOnline). While Redis is away, only this executor's tenants are checked; the
// write-back finds conflicts with other executors.
func (s *Store) CreatePlan(ctx context.Context, p *plan.Plan, tasks []*task.Task) error {
	return s.change(ctx, func() error { return s.createPlanOnline(ctx, p, tasks) },
		func() error {
			if err := s.watch.claimsPaused(); err != nil {
				return err
			}
			return s.mirror.CreatePlan(ctx, p, tasks)
		}, []string{p.ID()}, taskIDs(tasks))
}
