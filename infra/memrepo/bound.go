package memrepo

import (
	"sort"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// MirrorOptions bounds the mirror of a durable store (NewMirror).
type MirrorOptions struct {
	// CacheTasks bounds the tasks (each with its checkpoint) the mirror keeps as a cache:
	// ended tasks the durable store holds, and tasks only read from it; the least recently
	// stored go first. Ended plans and plans only read are cached alike, up to plans whose
	// task lists add up to CacheTasks ids. 0 caches nothing.
	CacheTasks int
	// NoIndex: the mirror keeps no plan indexes (rows, summaries, running sets): a store
	// shared by executors never answers from its mirror (Redis is the only source of truth),
	// so they would cost every write a map update and every task in flight its row for
	// nothing. Its Summary, Rows and Running answer as for a plan it does not index.
	NoIndex bool
}

// bound is what makes a DB a bounded mirror.
type bound struct {
	tasks, plans *retention
	// ended holds the status of ended tasks evicted while their plan is stored and has not
	// ended: a plan's settling, pause or cancel reads every task's status (Statuses), also
	// while the durable store is away.
	ended map[string]task.Status
}

// NewMirror returns an empty database that serves as the mirror of a durable store (the
// methods of mirror.go record what the durable store holds) and keeps only what the executor
// needs from it, not everything it ever stored as New does: every aggregate pinned (Pin: not
// yet written to the durable store), every task and plan this executor wrote (created, ran,
// changed) that has not ended, with the plans of those tasks, and a cache of the rest bounded
// by opts. A read that misses the mirror goes to the durable store.
func NewMirror(opts MirrorOptions) *DB {
	db := New()
	db.noIndex = opts.NoIndex
	db.bound = &bound{
		tasks: newRetention(max(opts.CacheTasks, 0)),
		plans: newRetention(max(opts.CacheTasks, 0)),
		ended: map[string]task.Status{},
	}
	return db
}

// Pin keeps the plans and tasks named, stored or about to be, whatever their status, until
// Unpin: what was changed on the mirror alone until it is written to the durable store. It
// returns those that were not pinned already. A DB made by New keeps everything anyway (and
// returns none).
func (db *DB) Pin(plans, tasks []string) (newPlans, newTasks []string) {
	if db.bound == nil {
		return nil, nil
	}
	db.mu.Lock()
	defer db.unlock()
	for _, id := range plans {
		if db.bound.plans.pin(id) {
			newPlans = append(newPlans, id)
		}
	}
	for _, id := range tasks {
		if db.bound.tasks.pin(id) {
			newTasks = append(newTasks, id)
		}
	}
	return newPlans, newTasks
}

// Unpin lets the plans and tasks named go as a bounded mirror's rules allow: they were
// written to the durable store.
func (db *DB) Unpin(plans, tasks []string) {
	if db.bound == nil {
		return
	}
	db.mu.Lock()
	defer db.unlock()
	for _, id := range plans {
		db.bound.plans.unpin(id)
	}
	for _, id := range tasks {
		db.bound.tasks.unpin(id)
	}
}

// unlock trims a bounded mirror to its bound, then releases the write lock: every change
// unlocks through it.
func (db *DB) unlock() {
	db.trim()
	db.mu.Unlock()
}

// recordTask notes that t was stored, by this executor's write (own) or a read. The caller
// holds the write lock.
func (db *DB) recordTask(t *task.Task, own bool) {
	b := db.bound
	if b == nil {
		return
	}
	ended := t.Status().Terminal() || b.plans.ended(t.PlanID())
	b.tasks.record(t.ID(), own, ended, 1)
	delete(b.ended, t.ID())
	if own && !ended { // the plan of a task it runs: its settling reads it, also while degraded
		b.plans.adopt(t.PlanID())
	}
}

// recordPlan notes that p was stored, by this executor's write (own) or a read. The caller
// holds the write lock.
func (db *DB) recordPlan(p *plan.Plan, own bool) {
	b := db.bound
	if b == nil {
		return
	}
	ended := p.Status().Terminal()
	was := b.plans.ended(p.ID())
	b.plans.record(p.ID(), own, ended, 1+len(p.TaskIDs()))
	if ended {
		db.forgetEnded(p)
	}
	if ended != was { // a plan ends once all its tasks did: a copy of one that has not is stale
		for _, id := range p.TaskIDs() {
			if t, ok := db.tasks[id]; ok {
				b.tasks.setEnded(id, ended || t.Status().Terminal())
			}
		}
	}
}

// pinnedPlan reports whether a bounded mirror pinned plan id. The caller holds the lock.
func (db *DB) pinnedPlan(id string) bool {
	return db.bound != nil && db.bound.plans.pinned(id)
}

// forgetEnded drops the statuses kept for p's evicted tasks.
func (db *DB) forgetEnded(p *plan.Plan) {
	if len(db.bound.ended) == 0 {
		return
	}
	for _, id := range p.TaskIDs() {
		delete(db.bound.ended, id)
	}
}

// trim evicts from a bounded mirror the cached tasks, then plans, beyond its bound. The
// caller holds the write lock.
func (db *DB) trim() {
	b := db.bound
	if b == nil {
		return
	}
	for id, ok := b.tasks.victim(); ok; id, ok = b.tasks.victim() {
		db.dropTask(id, true)
	}
	for id, ok := b.plans.victim(); ok; id, ok = b.plans.victim() {
		db.dropPlan(id)
	}
}

// dropTask removes task id, its checkpoint and its transcripts; from a bounded mirror also its
// tenant's entry when it names the task and, when evicted (not forgotten) an ended task of a
// plan stored that has not ended, keeps its status. The caller holds the write lock.
func (db *DB) dropTask(id string, evicted bool) {
	t := db.tasks[id]
	delete(db.tasks, id)
	delete(db.ckpts, id)
	delete(db.outs, id)
	b := db.bound
	if b == nil {
		return
	}
	b.tasks.remove(id)
	delete(b.ended, id)
	if t == nil {
		return
	}
	if db.tenants[t.TenantID()] == id {
		delete(db.tenants, t.TenantID())
	}
	if p, ok := db.plans[t.PlanID()]; evicted && ok && t.Status().Terminal() && !p.Status().Terminal() {
		b.ended[id] = t.Status()
	}
}

// dropPlan removes plan id with its index and its retention (NewStore); from a bounded mirror
// also its idempotency key when it names the plan, and the statuses kept for its tasks. The
// caller holds the write lock.
func (db *DB) dropPlan(id string) {
	p, ok := db.plans[id]
	if db.expiry != nil {
		db.expiry.active(id) // nothing left to forget
	}
	if b := db.bound; b != nil {
		b.plans.remove(id)
		if ok {
			if k := p.IdempotencyKey(); k != "" && db.idem[k] == id {
				delete(db.idem, k)
			}
			db.forgetEnded(p)
		}
	}
	if !ok {
		return
	}
	delete(db.plans, id)
	delete(db.indexes, id)
	if i := sort.SearchStrings(db.planIDs, id); i < len(db.planIDs) && db.planIDs[i] == id {
		db.planIDs = append(db.planIDs[:i], db.planIDs[i+1:]...)
	}
}

// endedStatus returns the status kept for evicted task id. The caller holds the lock.
func (db *DB) endedStatus(id string) (task.Status, bool) {
	if db.bound == nil {
		return "", false
	}
	st, ok := db.bound.ended[id]
	return st, ok
}
