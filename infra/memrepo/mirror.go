package memrepo

import (
	"sort"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// The methods in this file let a DB serve as the mirror of a durable store: they record what
// the durable store already accepted (or what was read back from it), so they check no
// fence and never fail.

// Put records p, replacing any stored version.
func (r *PlanRepo) Put(p *plan.Plan) {
	r.db.mu.Lock()
	defer r.db.mu.Unlock()
	r.db.putPlan(p)
}

// Put records t and, when cp is not nil, its checkpoint, replacing stored versions.
func (r *TaskRepo) Put(t *task.Task, cp *checkpoint.Checkpoint) {
	db := r.db
	db.mu.Lock()
	defer db.mu.Unlock()
	db.tasks[t.ID()] = t.Clone()
	if cp != nil {
		db.ckpts[t.ID()] = cp.Clone()
	}
}

// PutIfNewer records t, read back from the durable store, unless the stored copy is newer
// (a higher fence epoch, or the same epoch at a higher version): a read that raced a write
// must not undo it. It returns the copy it keeps.
func (r *TaskRepo) PutIfNewer(t *task.Task) *task.Task {
	db := r.db
	db.mu.Lock()
	defer db.mu.Unlock()
	if cur, ok := db.tasks[t.ID()]; ok {
		if cur.Fence() > t.Fence() || (cur.Fence() == t.Fence() && cur.Version() > t.Version()) {
			return cur.Clone()
		}
	}
	db.tasks[t.ID()] = t.Clone()
	return t
}

// PutLatest records taskID as tenantID's latest task.
func (r *TaskRepo) PutLatest(tenantID, taskID string) {
	r.db.mu.Lock()
	defer r.db.mu.Unlock()
	r.db.tenants[tenantID] = taskID
}

// Forget drops task id and its checkpoint, so the next read goes to the durable store.
func (r *TaskRepo) Forget(id string) {
	r.db.mu.Lock()
	defer r.db.mu.Unlock()
	delete(r.db.tasks, id)
	delete(r.db.ckpts, id)
}

// PutIfNewer records cp, read back from the durable store, unless the stored version is
// newer (a higher fence epoch, or more stages completed, or saved later).
func (s *CheckpointStore) PutIfNewer(cp *checkpoint.Checkpoint) *checkpoint.Checkpoint {
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	if cur, ok := s.db.ckpts[cp.TaskID()]; ok && (cur.Fence() > cp.Fence() ||
		(cur.Fence() == cp.Fence() && cur.SavedAt().After(cp.SavedAt()))) {
		return cur.Clone()
	}
	s.db.ckpts[cp.TaskID()] = cp.Clone()
	return cp
}

// States returns every stored plan's persisted form (for a write-back of everything).
func (r *PlanRepo) States() []plan.State {
	r.db.mu.RLock()
	defer r.db.mu.RUnlock()
	out := make([]plan.State, 0, len(r.db.plans))
	for _, p := range r.db.plans {
		out = append(out, p.State())
	}
	return out
}

// States returns every stored task's persisted form (for a write-back of everything).
func (r *TaskRepo) States() []task.State {
	r.db.mu.RLock()
	defer r.db.mu.RUnlock()
	out := make([]task.State, 0, len(r.db.tasks))
	for _, t := range r.db.tasks {
		out = append(out, t.State())
	}
	return out
}

// Forget drops plan id, so the next read goes to the durable store. A plan's immutable part
// is read from the durable store again then.
func (r *PlanRepo) Forget(id string) {
	db := r.db
	db.mu.Lock()
	defer db.mu.Unlock()
	if _, ok := db.plans[id]; !ok {
		return
	}
	delete(db.plans, id)
	if i := sort.SearchStrings(db.planIDs, id); i < len(db.planIDs) && db.planIDs[i] == id {
		db.planIDs = append(db.planIDs[:i], db.planIDs[i+1:]...)
	}
}
