package memrepo

import (
	"context"
	"errors"
	"fmt"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/cas"
)

// TaskRepo is the in-memory task.Repository.
type TaskRepo struct{ db *DB }

var _ task.Repository = (*TaskRepo)(nil)

// Create stores new tasks and points each tenant's index at its task.
func (r *TaskRepo) Create(_ context.Context, tasks []*task.Task) error {
	db := r.db
	db.mu.Lock()
	defer db.unlock()
	return db.createTasks(tasks)
}

// createTasks stores tasks unless one exists or a tenant is busy. The caller holds db.mu.
func (db *DB) createTasks(tasks []*task.Task) error {
	var busy []string
	for _, t := range tasks {
		if _, ok := db.tasks[t.ID()]; ok {
			return fmt.Errorf("memrepo: task %s exists", t.ID())
		}
		if cur, ok := db.tasks[db.tenants[t.TenantID()]]; ok && !cur.Status().Terminal() {
			busy = append(busy, t.TenantID())
		}
	}
	if len(busy) > 0 {
		return &task.BusyError{Tenants: busy}
	}
	for _, t := range tasks {
		db.setTask(t)
		db.tenants[t.TenantID()] = t.ID()
		db.recordTask(t, true)
	}
	return nil
}

// Reactivate checks that t is still its tenant's latest task.
func (r *TaskRepo) Reactivate(_ context.Context, t *task.Task) error {
	r.db.mu.RLock()
	defer r.db.mu.RUnlock()
	if r.db.tenants[t.TenantID()] != t.ID() {
		return &task.BusyError{Tenants: []string{t.TenantID()}}
	}
	return nil
}

// Task returns the task with id.
func (r *TaskRepo) Task(_ context.Context, id string) (*task.Task, error) {
	r.db.mu.RLock()
	t, ok := r.db.tasks[id]
	r.db.mu.RUnlock()
	if !ok {
		return nil, task.ErrNotFound
	}
	return t.Clone(), nil
}

// Latest returns the tenant's latest task.
func (r *TaskRepo) Latest(ctx context.Context, tenantID string) (*task.Task, error) {
	r.db.mu.RLock()
	id, ok := r.db.tenants[tenantID]
	r.db.mu.RUnlock()
	if !ok {
		return nil, task.ErrNotFound
	}
	return r.Task(ctx, id)
}

// LatestWithCheckpoint returns the tenant's latest task and its checkpoint (nil when it has
// none), read in one step.
func (r *TaskRepo) LatestWithCheckpoint(_ context.Context, tenantID string) (*task.Task, *checkpoint.Checkpoint, error) {
	r.db.mu.RLock()
	defer r.db.mu.RUnlock()
	t, ok := r.db.tasks[r.db.tenants[tenantID]]
	if !ok {
		return nil, nil, task.ErrNotFound
	}
	var cp *checkpoint.Checkpoint
	if stored, ok := r.db.ckpts[t.ID()]; ok {
		cp = stored.Clone()
	}
	return t.Clone(), cp, nil
}

// Peek returns the task with id, as Task does: memory holds the only copy (New), or is the
// local copy itself (NewMirror).
func (r *TaskRepo) Peek(ctx context.Context, id string) (*task.Task, error) { return r.Task(ctx, id) }

// ByIDs returns the tasks with the given ids, in that order.
func (r *TaskRepo) ByIDs(_ context.Context, ids []string) ([]*task.Task, error) {
	out := make([]*task.Task, len(ids))
	r.db.mu.RLock()
	defer r.db.mu.RUnlock()
	for i, id := range ids {
		t, ok := r.db.tasks[id]
		if !ok {
			return nil, fmt.Errorf("%w: %s", task.ErrNotFound, id)
		}
		out[i] = t.Clone()
	}
	return out, nil
}

// Statuses returns the statuses of the tasks with the given ids, in that order.
func (r *TaskRepo) Statuses(_ context.Context, ids []string) ([]task.Status, error) {
	out := make([]task.Status, len(ids))
	r.db.mu.RLock()
	defer r.db.mu.RUnlock()
	for i, id := range ids {
		t, ok := r.db.tasks[id]
		if !ok {
			st, ended := r.db.endedStatus(id)
			if !ended {
				return nil, fmt.Errorf("%w: %s", task.ErrNotFound, id)
			}
			out[i] = st
			continue
		}
		out[i] = t.Status()
	}
	return out, nil
}

// Save writes t and, when cp is not nil, its checkpoint: a compare-and-set refusing a
// superseded fence epoch (task.ErrFenced) and a copy that is not at the stored version
// (task.ErrConflict). t then carries the new version.
func (r *TaskRepo) Save(_ context.Context, t *task.Task, cp *checkpoint.Checkpoint) error {
	db := r.db
	db.mu.Lock()
	defer db.unlock()
	return db.saveTask(t, cp)
}

// saveTask is Save for a caller holding db.mu.
func (db *DB) saveTask(t *task.Task, cp *checkpoint.Checkpoint) error {
	stored, ok := db.tasks[t.ID()]
	if !ok {
		return task.ErrNotFound
	}
	if stored.Fence() > t.Fence() {
		return task.ErrFenced
	}
	if stored.Version() != t.Version() {
		return task.ErrConflict
	}
	t.Stored(t.Version() + 1)
	db.setTask(t)
	if cp != nil {
		db.ckpts[t.ID()] = cp.Clone()
	}
	db.recordTask(t, true)
	return nil
}

// Update applies fn to a copy of the stored task and saves it with a compare-and-set, again
// after losing to another writer. fn runs without the store's lock (it may read the store).
func (r *TaskRepo) Update(ctx context.Context, id string, fn func(t *task.Task) (*checkpoint.Checkpoint, error)) (*task.Task, error) {
	var cp *checkpoint.Checkpoint
	t, err := cas.Update(func() (*task.Task, error) { return r.Task(ctx, id) },
		func(t *task.Task) (err error) { cp, err = fn(t); return err },
		func(t *task.Task) error { return r.Save(ctx, t, cp) }, task.ErrConflict)
	if errors.Is(err, task.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", err, id)
	}
	return t, err
}

// BumpFence raises the stored task's fence epoch by one and returns the task as stored.
func (r *TaskRepo) BumpFence(_ context.Context, id string) (*task.Task, error) {
	db := r.db
	db.mu.Lock()
	defer db.unlock()
	stored, ok := db.tasks[id]
	if !ok {
		return nil, task.ErrNotFound
	}
	s := stored.State()
	s.Fence++
	s.Version++
	bumped, err := task.Load(s)
	if err != nil {
		return nil, err
	}
	db.setTask(bumped)
	db.recordTask(bumped, true)
	return bumped.Clone(), nil
}
