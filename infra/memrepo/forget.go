package memrepo

import (
	"context"
	"maps"

	"github.com/executor-dev/executor/domain/plan"
)

// forgetBatch is how many tasks of a plan the sweep forgets per hold of the write lock: a
// 100,000-tenant plan is forgotten in 100 short holds, between which reads and writes go on.
const forgetBatch = 1000

// Sweep forgets every ended plan whose retention ran out by the store's clock (NewStore), and
// everything of it, and returns how many plans it forgot. The plan goes first, in one hold of
// the write lock: its listing entry, idempotency key, index (rows, summary, RUNNING ids) and
// retention; reads of it then answer plan.ErrNotFound (an empty summary and rows), and it can
// no longer be made active again (a retry's reopen finds no plan). Then its tasks go, in
// batches of forgetBatch: each task with its checkpoint, its transcripts and its tenant's
// entry where that still names the task (a tenant another plan's task took over keeps it);
// reads of them then answer task.ErrNotFound, checkpoint.ErrNotFound and no transcripts, as
// after Redis expired their keys. When ctx ends, Sweep returns after the plan it is
// forgetting. A DB that keeps everything (New, NewMirror) forgets nothing.
func (db *DB) Sweep(ctx context.Context) int {
	if db.expiry == nil {
		return 0
	}
	n := 0
	for ctx.Err() == nil {
		p, ok := db.takeDue()
		if !ok {
			break
		}
		db.forgetTasks(p.ID(), p.TaskIDs())
		db.audit.forget(p.ID())
		db.deliveries.forget(p.ID())
		n++
	}
	if n > 0 {
		db.compact()
	}
	return n
}

// takeDue takes out of the store the ended plan whose retention ran out first, if one did,
// with its listing entry, idempotency key, index and retention, and returns it.
func (db *DB) takeDue() (*plan.Plan, bool) {
	db.mu.Lock()
	defer db.mu.Unlock()
	for {
		id, ok := db.expiry.due(db.clock())
		if !ok {
			return nil, false
		}
		p, stored := db.plans[id]
		if !stored || !p.Status().Terminal() { // a safeguard: every write keeps the retention in step
			continue
		}
		if k := p.IdempotencyKey(); k != "" && db.idem[k] == id {
			delete(db.idem, k)
		}
		db.dropPlan(id)
		return p, true
	}
}

// forgetTasks forgets the tasks ids of plan planID, forgetBatch per hold of the write lock.
func (db *DB) forgetTasks(planID string, ids []string) {
	for start := 0; start < len(ids); start += forgetBatch {
		batch := ids[start:min(start+forgetBatch, len(ids))]
		db.mu.Lock()
		for _, id := range batch {
			db.forgetTask(planID, id)
		}
		db.mu.Unlock()
	}
}

// forgetTask removes task id of plan planID with its checkpoint, its transcripts and its
// tenant's entry when that names it. The caller holds the write lock.
func (db *DB) forgetTask(planID, id string) {
	t, ok := db.tasks[id]
	if !ok || t.PlanID() != planID {
		return
	}
	delete(db.tasks, id)
	delete(db.ckpts, id)
	delete(db.outs, id)
	if db.tenants[t.TenantID()] == id {
		delete(db.tenants, t.TenantID())
	}
	db.forgot++
}

// compact gives the memory of the task maps back once the sweep has forgotten many tasks and
// few are left: a Go map keeps the room of the most entries it ever held, so after a large
// plan is forgotten the maps are copied into new ones of their size. Only when at most
// forgetBatch tasks are left, so that the copy holds the lock no longer than a batch.
func (db *DB) compact() {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.forgot < 4*forgetBatch || len(db.tasks) > forgetBatch {
		return
	}
	db.tasks = shrunk(db.tasks)
	db.ckpts = shrunk(db.ckpts)
	db.outs = shrunk(db.outs)
	db.tenants = shrunk(db.tenants)
	db.forgot = 0
}

// shrunk returns a copy of m in a map made for its entries (maps.Clone would copy its room).
func shrunk[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	maps.Copy(out, m)
	return out
}
