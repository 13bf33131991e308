package memrepo

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/executor-dev/executor/domain/audit"
)

// AuditLog is the audit.Log in memory: each plan's records in the order they were appended,
// at most audit.MaxPerPlan (the oldest go first), and those of no plan (an unlock of a tenant
// without a task) in one list bounded alike. A DB made by NewStore forgets a plan's records
// with the plan (Sweep). Safe for concurrent use.
type AuditLog struct {
	mu    sync.Mutex
	plans map[string]*auditList // by plan id; planless under ""
}

// auditList is one plan's records, oldest first; seq numbers them from 1 in append order.
type auditList struct {
	recs []auditEntry
	seq  uint64
}

// auditEntry is a stored record with its place in its list.
type auditEntry struct {
	seq uint64
	rec *audit.Record
}

var _ audit.Log = (*AuditLog)(nil)

// NewAuditLog returns an empty audit log.
func NewAuditLog() *AuditLog { return &AuditLog{plans: map[string]*auditList{}} }

// Audit returns the DB's audit log.
func (db *DB) Audit() *AuditLog { return db.audit }

// Append stores r.
func (l *AuditLog) Append(_ context.Context, r *audit.Record) error {
	f := r.Fields()
	stored, err := audit.Load(f, r.Outcome())
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	list := l.plans[f.PlanID]
	if list == nil {
		list = &auditList{}
		l.plans[f.PlanID] = list
	}
	list.seq++
	list.recs = append(list.recs, auditEntry{seq: list.seq, rec: stored})
	if over := len(list.recs) - audit.MaxPerPlan; over > 0 {
		list.recs = slices.Delete(list.recs, 0, over)
	}
	return nil
}

// Settle stores r's outcome; a record no longer kept (dropped beyond the bound, or with its
// plan) is not an error.
func (l *AuditLog) Settle(_ context.Context, r *audit.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	list := l.plans[r.Fields().PlanID]
	if list == nil {
		return nil
	}
	for i := len(list.recs) - 1; i >= 0; i-- {
		if e := list.recs[i]; e.rec.ID() == r.ID() {
			stored, err := audit.Load(r.Fields(), r.Outcome())
			if err != nil {
				return err
			}
			list.recs[i].rec = stored
			return nil
		}
	}
	return nil
}

// List returns a page of the records q selects, newest first: one plan's when q names it,
// else every plan's, the newest plans first, the records of no plan last.
func (l *AuditLog) List(_ context.Context, q audit.Query) (audit.Page, error) {
	cur, resume, err := audit.ParseCursor(q.Cursor)
	if err != nil {
		return audit.Page{}, err
	}
	limit := audit.PageLimit(q.Limit)
	l.mu.Lock()
	defer l.mu.Unlock()
	var page audit.Page
	for _, planID := range l.order(q.PlanID) {
		below := uint64(math.MaxUint64) // the seqs this plan's part of the page starts under
		if resume {
			if planID != cur.PlanID {
				continue
			}
			n, err := strconv.ParseUint(cur.Pos, 10, 64)
			if err != nil {
				return audit.Page{}, fmt.Errorf("%w: cursor %q", audit.ErrInvalid, q.Cursor)
			}
			below, resume = n, false
		}
		list := l.plans[planID]
		for j := len(list.recs) - 1; j >= 0; j-- {
			e := list.recs[j]
			if e.seq >= below || !e.rec.Matches(q) {
				continue
			}
			if len(page.Records) == limit {
				page.Next = audit.Cursor{PlanID: planID, Pos: strconv.FormatUint(below, 10)}.String()
				return page, nil
			}
			page.Records = append(page.Records, e.rec)
			below = e.seq
		}
	}
	return page, nil
}

// order lists the plans a listing reads, in order: planID alone when set, else every plan
// the log holds records of, newest first (ULIDs sort by time), then the planless list.
func (l *AuditLog) order(planID string) []string {
	if planID != "" {
		if _, ok := l.plans[planID]; ok {
			return []string{planID}
		}
		return nil
	}
	ids := make([]string, 0, len(l.plans))
	for id := range l.plans {
		if id != "" {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b string) int { return strings.Compare(b, a) })
	if _, ok := l.plans[""]; ok {
		ids = append(ids, "")
	}
	return ids
}

// Forget drops the records of plan planID.
func (l *AuditLog) Forget(_ context.Context, planID string) error {
	l.forget(planID)
	return nil
}

// forget drops the records of plan id.
func (l *AuditLog) forget(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.plans, id)
}
