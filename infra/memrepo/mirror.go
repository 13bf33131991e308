package memrepo

import (
	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// The methods in this file let a DB serve as the mirror of a durable store: they record what
// the durable store already accepted (or what was read back from it), so they check no
// fence and never fail. A mirror made by NewMirror keeps what this executor wrote (Put) and
// caches what it only read (PutIfNewer), within its bound.

// Put records p, written by this executor, replacing any stored version.
func (r *PlanRepo) Put(p *plan.Plan) {
	r.db.mu.Lock()
	defer r.db.unlock()
	r.db.putPlan(p, true)
}

// PutIfNewer records p, read back from the durable store, unless the stored copy is at the
// same or a higher version (a read that raced a write must not undo it) or pinned (changed on
// the mirror alone). It returns the copy it keeps.
func (r *PlanRepo) PutIfNewer(p *plan.Plan) *plan.Plan {
	db := r.db
	db.mu.Lock()
	defer db.unlock()
	if cur, ok := db.plans[p.ID()]; ok && (cur.Version() >= p.Version() || db.pinnedPlan(p.ID())) {
		db.recordPlan(cur, false)
		return cur.Clone()
	}
	db.putPlan(p, false)
	return p
}

// Put records t, written by this executor, and, when cp is not nil, its checkpoint,
// replacing stored versions.
func (r *TaskRepo) Put(t *task.Task, cp *checkpoint.Checkpoint) {
	db := r.db
	db.mu.Lock()
	defer db.unlock()
	db.setTask(t)
	if cp != nil {
		db.ckpts[t.ID()] = cp.Clone()
	}
	db.recordTask(t, true)
}

// PutIfNewer records t, read back from the durable store, unless the stored copy is newer
// (a higher fence epoch, or the same epoch at a higher version): a read that raced a write
// must not undo it. It returns the copy it keeps.
func (r *TaskRepo) PutIfNewer(t *task.Task) *task.Task {
	db := r.db
	db.mu.Lock()
	defer db.unlock()
	if cur, ok := db.tasks[t.ID()]; ok && newerTask(cur, t) {
		db.recordTask(cur, false)
		return cur.Clone()
	}
	db.setTask(t)
	db.recordTask(t, false)
	return t
}

// Newest returns the stored copy of t when it is newer than t (as PutIfNewer judges), else
// t, and records nothing: for a read of a task whose write is under way, which that write's
// outcome, not the read, records.
func (r *TaskRepo) Newest(t *task.Task) *task.Task {
	db := r.db
	db.mu.RLock()
	defer db.mu.RUnlock()
	if cur, ok := db.tasks[t.ID()]; ok && newerTask(cur, t) {
		return cur.Clone()
	}
	return t
}

// newerTask reports whether a is a later state than b: a higher fence epoch, or the same
// epoch at a higher version.
func newerTask(a, b *task.Task) bool {
	return a.Fence() > b.Fence() || (a.Fence() == b.Fence() && a.Version() > b.Version())
}

// PutLatest records taskID as tenantID's latest task. A bounded mirror (NewMirror) records it
// only while it holds the task, and forgets it with the task.
func (r *TaskRepo) PutLatest(tenantID, taskID string) {
	db := r.db
	db.mu.Lock()
	defer db.mu.Unlock()
	if _, ok := db.tasks[taskID]; ok || db.bound == nil {
		db.tenants[tenantID] = taskID
	}
}

// Forget drops task id and its checkpoint, so the next read goes to the durable store.
func (r *TaskRepo) Forget(id string) {
	r.db.mu.Lock()
	defer r.db.unlock()
	r.db.dropTask(id, false)
}

// PutIfNewer records cp, read back from the durable store, unless the stored version is
// newer (a higher fence epoch, or more stages completed, or saved later). A bounded mirror
// (NewMirror) records it only while it holds its task.
func (s *CheckpointStore) PutIfNewer(cp *checkpoint.Checkpoint) *checkpoint.Checkpoint {
	db := s.db
	db.mu.Lock()
	defer db.mu.Unlock()
	if _, ok := db.tasks[cp.TaskID()]; !ok && db.bound != nil {
		return cp
	}
	if cur, ok := db.ckpts[cp.TaskID()]; ok && (cur.Fence() > cp.Fence() ||
		(cur.Fence() == cp.Fence() && cur.SavedAt().After(cp.SavedAt()))) {
		return cur.Clone()
	}
	db.ckpts[cp.TaskID()] = cp.Clone()
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

// Own reports whether this executor wrote plan id (created or changed it, or runs a task of
// it) rather than only read it from the durable store: a DB made by New holds only its own.
func (r *PlanRepo) Own(id string) bool {
	r.db.mu.RLock()
	defer r.db.mu.RUnlock()
	return r.db.bound == nil || r.db.bound.plans.own(id)
}

// Own reports whether this executor wrote task id (created, ran or changed it) rather than
// only read it from the durable store: a DB made by New holds only its own.
func (r *TaskRepo) Own(id string) bool {
	r.db.mu.RLock()
	defer r.db.mu.RUnlock()
	return r.db.bound == nil || r.db.bound.tasks.own(id)
}

// Forget drops plan id, so the next read goes to the durable store. A plan's immutable part
// is read from the durable store again then.
func (r *PlanRepo) Forget(id string) {
	r.db.mu.Lock()
	defer r.db.unlock()
	r.db.dropPlan(id)
}
