package memrepo

import (
	"context"
	"fmt"
	"sort"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/infra/cas"
)

// PlanRepo is the in-memory plan.Repository.
type PlanRepo struct{ db *DB }

var _ plan.Repository = (*PlanRepo)(nil)

// Create stores a new plan.
func (r *PlanRepo) Create(_ context.Context, p *plan.Plan) error {
	db := r.db
	db.mu.Lock()
	defer db.unlock()
	if _, ok := db.plans[p.ID()]; ok {
		return fmt.Errorf("memrepo: plan %s exists", p.ID())
	}
	db.putPlan(p, true)
	return nil
}

// putPlan stores p, keeping planIDs sorted and the first plan of an idempotency key, and, on
// the embedded store, the retention of an ended plan (expire); own: p is this executor's
// write, not a read (see NewMirror). The caller holds db.mu.
func (db *DB) putPlan(p *plan.Plan, own bool) {
	if _, ok := db.plans[p.ID()]; !ok {
		i := sort.SearchStrings(db.planIDs, p.ID())
		db.planIDs = append(db.planIDs, "")
		copy(db.planIDs[i+1:], db.planIDs[i:])
		db.planIDs[i] = p.ID()
	}
	db.plans[p.ID()] = p.Clone()
	if k := p.IdempotencyKey(); k != "" {
		if _, taken := db.idem[k]; !taken {
			db.idem[k] = p.ID()
		}
	}
	db.recordPlan(p, own)
	db.expire(p)
}

// Plan returns the plan with id.
func (r *PlanRepo) Plan(_ context.Context, id string) (*plan.Plan, error) {
	r.db.mu.RLock()
	p, ok := r.db.plans[id]
	r.db.mu.RUnlock()
	if !ok {
		return nil, plan.ErrNotFound
	}
	return p.Clone(), nil
}

// ByIdempotencyKey returns the plan first submitted with key.
func (r *PlanRepo) ByIdempotencyKey(ctx context.Context, key string) (*plan.Plan, error) {
	r.db.mu.RLock()
	id, ok := r.db.idem[key]
	r.db.mu.RUnlock()
	if !ok {
		return nil, plan.ErrNotFound
	}
	return r.Plan(ctx, id)
}

// List returns plans matching f, newest first, examining at most f.Scan plans (f.Resume).
func (r *PlanRepo) List(_ context.Context, f plan.Filter) ([]*plan.Plan, error) {
	db := r.db
	db.mu.RLock()
	defer db.mu.RUnlock()
	end := len(db.planIDs)
	if f.Before != "" {
		end = sort.SearchStrings(db.planIDs, f.Before)
	}
	var out []*plan.Plan
	for i, scanned := end-1, 0; i >= 0 && (f.Limit <= 0 || len(out) < f.Limit); i-- {
		if f.Scan > 0 && scanned == f.Scan {
			if f.Resume != nil {
				*f.Resume = db.planIDs[i+1]
			}
			break
		}
		scanned++
		p := db.plans[db.planIDs[i]]
		if !f.Matches(p) {
			continue
		}
		out = append(out, p.Clone())
	}
	return out, nil
}

// Save writes a changed plan: a compare-and-set refusing a copy that is not at the stored
// version (plan.ErrConflict). p then carries the new version.
func (r *PlanRepo) Save(_ context.Context, p *plan.Plan) error {
	db := r.db
	db.mu.Lock()
	defer db.unlock()
	return db.savePlan(p)
}

// savePlan is Save for a caller holding db.mu. A plan saved ended gets the retention from
// now; one saved active loses it (expire).
func (db *DB) savePlan(p *plan.Plan) error {
	stored, ok := db.plans[p.ID()]
	if !ok {
		return plan.ErrNotFound
	}
	if stored.Version() != p.Version() {
		return plan.ErrConflict
	}
	p.Stored(p.Version() + 1)
	db.plans[p.ID()] = p.Clone()
	db.recordPlan(p, true)
	db.expire(p)
	return nil
}

// Update applies fn to a copy of the stored plan and saves it with a compare-and-set, again
// after losing to another writer. fn runs without the store's lock.
func (r *PlanRepo) Update(ctx context.Context, id string, fn func(p *plan.Plan) error) (*plan.Plan, error) {
	return cas.Update(func() (*plan.Plan, error) { return r.Plan(ctx, id) }, fn,
		func(p *plan.Plan) error { return r.Save(ctx, p) }, plan.ErrConflict)
}

// Refresh does nothing: the memory store keeps no copies, it is the store.
func (r *PlanRepo) Refresh(context.Context, string) {}
