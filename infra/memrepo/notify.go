package memrepo

import (
	"context"
	"sync"
	"time"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/notify"
)

// Deliveries is the notify.Deliveries in memory, for one executor on the embedded store: its
// pending plans are the DB's plans with notices past the last one marked delivered.
type Deliveries struct {
	db *DB

	mu     sync.Mutex
	states map[string]map[string]plan.Delivery // by plan id
	done   map[string]string                   // plan id → the last notice with nothing left before it
}

var _ notify.Deliveries = (*Deliveries)(nil)

func newDeliveries(db *DB) *Deliveries {
	return &Deliveries{db: db, states: map[string]map[string]plan.Delivery{}, done: map[string]string{}}
}

// Deliveries returns the DB's notification deliveries.
func (db *DB) Deliveries() *Deliveries { return db.deliveries }

// forget drops what is known of plan id's deliveries (Sweep forgot the plan).
func (d *Deliveries) forget(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.states, id)
	delete(d.done, id)
}

// Pending returns up to n plans with notices past the last one marked delivered.
func (d *Deliveries) Pending(_ context.Context, n int) ([]string, error) {
	d.db.mu.RLock()
	var last = map[string]string{}
	for id, p := range d.db.plans {
		if ns := p.Notices(); len(p.Notify()) > 0 && len(ns) > 0 {
			last[id] = ns[len(ns)-1].ID
		}
	}
	d.db.mu.RUnlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for id, l := range last {
		if d.done[id] != l && len(out) < n {
			out = append(out, id)
		}
	}
	return out, nil
}

// Delivered marks plan planID delivered up to lastNotice.
func (d *Deliveries) Delivered(_ context.Context, planID, lastNotice string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if lastNotice == "" {
		delete(d.done, planID)
		delete(d.states, planID)
		return nil
	}
	d.done[planID] = lastNotice
	return nil
}

// States returns a copy of plan planID's delivery states.
func (d *Deliveries) States(_ context.Context, planID string) (map[string]plan.Delivery, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]plan.Delivery, len(d.states[planID]))
	for k, st := range d.states[planID] {
		out[k] = st
	}
	return out, nil
}

// Claim takes delivery k for owner, unless it is done or another owner's claim runs at now.
func (d *Deliveries) Claim(_ context.Context, planID string, k string, owner string, now, until time.Time) (plan.Delivery, bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	st := d.states[planID][k]
	if st.Done() || (st.Owner != "" && st.Owner != owner && st.Until.After(now)) {
		return st, false, nil
	}
	claimed := st
	claimed.Owner, claimed.Until = owner, until
	d.put(planID, k, claimed)
	return st, true, nil
}

// Record stores st after owner's attempt, unless another owner holds the claim.
func (d *Deliveries) Record(_ context.Context, planID string, k string, owner string, st plan.Delivery) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if cur := d.states[planID][k]; cur.Owner != "" && cur.Owner != owner {
		return nil
	}
	st.Owner, st.Until = "", time.Time{}
	d.put(planID, k, st)
	return nil
}

func (d *Deliveries) put(planID string, k string, st plan.Delivery) {
	m := d.states[planID]
	if m == nil {
		m = map[string]plan.Delivery{}
		d.states[planID] = m
	}
	m[k] = st
}
