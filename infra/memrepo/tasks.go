package memrepo

import (
	"context"
	"fmt"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/task"
)

// TaskRepo is the in-memory task.Repository.
type TaskRepo struct{ db *DB }

var _ task.Repository = (*TaskRepo)(nil)

// Create stores new tasks and points each tenant's index at its task.
func (r *TaskRepo) Create(_ context.Context, tasks []*task.Task) error {
	db := r.db
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.createTasks(tasks)
}

// createTasks stores tasks unless one exists or a tenant is busy. The caller holds db.mu.
func (db *DB) createTasks(tasks []*task.Task) error {
	var busy []string
	for _, t := range tasks {
		if _, ok := db.tasks[t.ID()]; ok {
			return fmt.Errorf("memrepo: task %s exists", t.ID())
		}
		if id, ok := db.tenants[t.TenantID()]; ok && !db.tasks[id].Status().Terminal() {
			busy = append(busy, t.TenantID())
		}
	}
	if len(busy) > 0 {
		return &task.BusyError{Tenants: busy}
	}
	for _, t := range tasks {
		db.tasks[t.ID()] = t.Clone()
		db.tenants[t.TenantID()] = t.ID()
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
			return nil, fmt.Errorf("%w: %s", task.ErrNotFound, id)
		}
		out[i] = t.Status()
	}
	return out, nil
}

// Save writes t and, when cp is not nil, its checkpoint, refusing a superseded fence epoch.
func (r *TaskRepo) Save(_ context.Context, t *task.Task, cp *checkpoint.Checkpoint) error {
	db := r.db
	db.mu.Lock()
	defer db.mu.Unlock()
	stored, ok := db.tasks[t.ID()]
	if !ok {
		return task.ErrNotFound
	}
	if stored.Fence() > t.Fence() {
		return task.ErrFenced
	}
	db.tasks[t.ID()] = t.Clone()
	if cp != nil {
		db.ckpts[t.ID()] = cp.Clone()
	}
	return nil
}

// BumpFence raises the stored task's fence epoch by one and returns the task as stored.
func (r *TaskRepo) BumpFence(_ context.Context, id string) (*task.Task, error) {
	db := r.db
	db.mu.Lock()
	defer db.mu.Unlock()
	stored, ok := db.tasks[id]
	if !ok {
		return nil, task.ErrNotFound
	}
	s := stored.State()
	s.Fence++
	bumped, err := task.Load(s)
	if err != nil {
		return nil, err
	}
	db.tasks[id] = bumped
	return bumped.Clone(), nil
}
