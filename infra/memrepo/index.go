package memrepo

import (
	"context"

	"github.com/executor-dev/executor/domain/task"
)

// planIndex is one plan's index: the row of each of its tasks, their summary and the ids of
// the RUNNING ones, kept with every write of a task (setTask), so that a summary never reads
// the plan's every task.
type planIndex struct {
	rows    map[string]task.Row
	sum     task.Summary
	running map[string]struct{}
}

// setTask stores a copy of t and indexes it. The caller holds the write lock.
func (db *DB) setTask(t *task.Task) {
	db.tasks[t.ID()] = t.Clone()
	db.index(t)
}

// index records t's row in its plan's index unless the index holds the same or a later write
// of the task (nothing without indexes: MirrorOptions.NoIndex). The caller holds the write lock.
func (db *DB) index(t *task.Task) {
	if db.noIndex {
		return
	}
	r, planID := task.RowOf(t), t.PlanID()
	ix := db.indexes[planID]
	if ix == nil {
		ix = &planIndex{rows: map[string]task.Row{}, sum: task.NewSummary(), running: map[string]struct{}{}}
		db.indexes[planID] = ix
	}
	if old, ok := ix.rows[r.ID]; ok {
		if !r.Newer(old) {
			return
		}
		if r.SameStep(old) {
			r.Since = old.Since
		}
		ix.sum.Add(old, -1)
		delete(ix.running, r.ID)
	}
	ix.sum.Add(r, 1)
	ix.rows[r.ID] = r
	if r.Status == task.Running {
		ix.running[r.ID] = struct{}{}
	}
}

// Summary returns the summary of the plan's tasks as its index holds them (an empty one for
// a plan it does not index).
func (r *TaskRepo) Summary(_ context.Context, planID string) (task.Summary, error) {
	db := r.db
	db.mu.RLock()
	defer db.mu.RUnlock()
	ix := db.indexes[planID]
	if ix == nil {
		return task.NewSummary(), nil
	}
	out := ix.sum.Clone()
	running := make([]task.Row, 0, len(ix.running))
	for id := range ix.running {
		running = append(running, ix.rows[id])
	}
	out.Slowest = task.SlowestOf(running)
	return out, nil
}

// Rows returns the rows of the plan's indexed tasks by task id.
func (r *TaskRepo) Rows(_ context.Context, planID string) (map[string]task.Row, error) {
	db := r.db
	db.mu.RLock()
	defer db.mu.RUnlock()
	ix := db.indexes[planID]
	if ix == nil {
		return map[string]task.Row{}, nil
	}
	out := make(map[string]task.Row, len(ix.rows))
	for id, row := range ix.rows {
		out[id] = row
	}
	return out, nil
}

// ForgetRows drops the rows of ids, tasks of the plan the store no longer holds, from the plan's
// index with their counts.
func (r *TaskRepo) ForgetRows(_ context.Context, planID string, ids []string) error {
	db := r.db
	db.mu.Lock()
	defer db.mu.Unlock()
	ix := db.indexes[planID]
	if ix == nil {
		return nil
	}
	for _, id := range ids {
		if old, ok := ix.rows[id]; ok {
			ix.sum.Add(old, -1)
			delete(ix.rows, id)
			delete(ix.running, id)
		}
	}
	return nil
}

// Reindex records the rows of tasks, read from the store, in their plans' indexes (a later
// write a row holds stands).
func (r *TaskRepo) Reindex(_ context.Context, tasks []*task.Task) error {
	db := r.db
	db.mu.Lock()
	defer db.mu.Unlock()
	for _, t := range tasks {
		db.index(t)
	}
	return nil
}

// Running returns the ids of the plan's RUNNING tasks as its index holds them.
func (r *TaskRepo) Running(_ context.Context, planID string) ([]string, error) {
	db := r.db
	db.mu.RLock()
	defer db.mu.RUnlock()
	ix := db.indexes[planID]
	if ix == nil {
		return nil, nil
	}
	out := make([]string, 0, len(ix.running))
	for id := range ix.running {
		out = append(out, id)
	}
	return out, nil
}
