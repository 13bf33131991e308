package redisrepo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/domain/audit"
	"github.com/executor-dev/executor/infra/memrepo"
)

// AuditLog is the audit.Log on Redis: each plan's records in a stream in the plan's slot
// (rediskey's Audit: entry fields `id` and `r`, the record as JSON), their outcomes in a hash
// beside it (AuditOutcomes: record id → outcome JSON), both with the plan's TTL
// (audit_append.lua, audit_settle.lua, retain). A shared store writes them to Redis or fails
// (the action is then not taken). A store alone on its Redis keeps what it could not write
// while Redis is away in memory (degraded mode), answers listings from there meanwhile, and
// writes it to Redis before the journal's last write-back pass ends the outage (flush).
type AuditLog struct {
	s *Store

	mu      sync.Mutex
	pending []pendingAudit    // what to write, in order
	offline *memrepo.AuditLog // the records held, for listings while Redis is away
}

// pendingAudit is a record to write, or only its outcome (its append reached Redis).
type pendingAudit struct {
	rec         *audit.Record
	outcomeOnly bool
}

var _ audit.Log = (*AuditLog)(nil)

// Audit returns the store's audit log.
func (s *Store) Audit() *AuditLog { return s.audit }

func newAuditLog(s *Store) *AuditLog {
	return &AuditLog{s: s, offline: memrepo.NewAuditLog()}
}

// recordJSON is a record as the stream holds it.
type recordJSON struct {
	At       time.Time   `json:"at"`
	Actor    string      `json:"actor"`
	Role     string      `json:"role,omitempty"`
	Request  string      `json:"rid,omitempty"`
	Executor string      `json:"exec,omitempty"`
	Action   string      `json:"action"`
	Plan     string      `json:"plan,omitempty"`
	Tenant   string      `json:"tenant,omitempty"`
	Task     string      `json:"task,omitempty"`
	Attrs    [][2]string `json:"req,omitempty"`
}

// outcomeJSON is an outcome as the outcomes hash holds it.
type outcomeJSON struct {
	Result string      `json:"result"`
	At     time.Time   `json:"at"`
	Code   string      `json:"code,omitempty"`
	Attrs  [][2]string `json:"attrs,omitempty"`
}

// Append stores r in Redis; alone, while Redis is away, in memory until it is back.
func (l *AuditLog) Append(ctx context.Context, r *audit.Record) error {
	if l.keepOffline(ctx, r, false) {
		return nil
	}
	err := l.appendOnline(ctx, r)
	if !l.s.shared && l.s.mon.Fail(err) {
		l.hold(r, false)
		return nil
	}
	return err
}

// Settle stores r's outcome in Redis, or with r in memory when r waits there or Redis is
// away (alone).
func (l *AuditLog) Settle(ctx context.Context, r *audit.Record) error {
	if l.keepOffline(ctx, r, true) {
		return nil
	}
	err := l.settleOnline(ctx, r)
	if !l.s.shared && l.s.mon.Fail(err) {
		l.hold(r, true)
		return nil
	}
	return err
}

// List returns a page from Redis; alone, while Redis is away, from what waits in memory.
func (l *AuditLog) List(ctx context.Context, q audit.Query) (audit.Page, error) {
	return read(l.s, func() (audit.Page, error) {
		if err := l.flush(ctx); err != nil {
			return audit.Page{}, err
		}
		return l.listOnline(ctx, q)
	}, func() (audit.Page, error) {
		l.mu.Lock()
		held := l.offline
		l.mu.Unlock()
		return held.List(ctx, q)
	})
}

// Forget drops the records of plan planID (its submission was refused: it never existed),
// in Redis and among those waiting in memory.
func (l *AuditLog) Forget(ctx context.Context, planID string) error {
	if planID == "" {
		return nil
	}
	l.mu.Lock()
	kept := l.pending[:0]
	for _, p := range l.pending {
		if p.rec.Fields().PlanID != planID {
			kept = append(kept, p)
		}
	}
	l.pending = kept
	_ = l.offline.Forget(ctx, planID)
	l.mu.Unlock()
	if !l.s.shared && l.s.degraded() {
		return nil // never written: held in memory only
	}
	return wrap("forget audit records", l.s.client.Del(ctx, l.s.keys.Audit(planID), l.s.keys.AuditOutcomes(planID)).Err())
}

// keepOffline keeps r in memory when Redis is away (alone) or r waits there already (its
// append is not written yet), and reports whether it did; else it first writes what waits.
func (l *AuditLog) keepOffline(ctx context.Context, r *audit.Record, settle bool) bool {
	if l.s.shared {
		return false
	}
	l.mu.Lock()
	waiting := len(l.pending) > 0
	l.mu.Unlock()
	if !l.s.degraded() && (!waiting || l.flush(ctx) == nil) {
		return false
	}
	l.hold(r, settle)
	return true
}

// hold keeps r in memory for flush: the record, or its outcome (settle) when its append
// reached Redis already.
func (l *AuditLog) hold(r *audit.Record, settle bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if settle {
		for i, p := range l.pending {
			if p.rec.ID() == r.ID() { // its append waits too: written with its outcome
				l.pending[i].rec = r
				_ = l.offline.Settle(context.Background(), r)
				return
			}
		}
	}
	l.pending = append(l.pending, pendingAudit{rec: r, outcomeOnly: settle})
	if !settle {
		_ = l.offline.Append(context.Background(), r)
	}
}

// flush writes what waits in memory to Redis, in order; an error leaves the rest waiting.
func (l *AuditLog) flush(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.pending) > 0 {
		p := l.pending[0]
		write := l.appendOnline
		if p.outcomeOnly {
			write = l.settleOnline
		}
		if err := write(ctx, p.rec); err != nil {
			return err
		}
		l.pending = l.pending[1:]
	}
	l.offline = memrepo.NewAuditLog()
	return nil
}

// appendOnline runs audit_append.lua for r (its outcome written with it when it has one).
func (l *AuditLog) appendOnline(ctx context.Context, r *audit.Record) error {
	f := r.Fields()
	rec, err := json.Marshal(recordJSON{At: f.At, Actor: f.Origin.Actor, Role: f.Origin.Role,
		Request: f.Origin.RequestID, Executor: f.Origin.Executor, Action: f.Action, Plan: f.PlanID,
		Tenant: f.Tenant, Task: f.TaskID, Attrs: pairs(f.Request)})
	if err != nil {
		return fmt.Errorf("redisrepo: audit record: %w", err)
	}
	keys := l.keys(f.PlanID)
	if err := auditAppendScript.Run(ctx, l.s.client, keys, r.ID(), rec, audit.MaxPerPlan,
		l.s.ttl.Milliseconds()).Err(); err != nil {
		return wrap("append audit record", err)
	}
	if r.Outcome().Result != audit.Pending {
		return l.settleOnline(ctx, r)
	}
	return nil
}

// settleOnline runs audit_settle.lua for r's outcome.
func (l *AuditLog) settleOnline(ctx context.Context, r *audit.Record) error {
	o := r.Outcome()
	out, err := json.Marshal(outcomeJSON{Result: string(o.Result), At: o.At, Code: o.Code, Attrs: pairs(o.Attrs)})
	if err != nil {
		return fmt.Errorf("redisrepo: audit outcome: %w", err)
	}
	err = auditSettleScript.Run(ctx, l.s.client, l.keys(r.Fields().PlanID), r.ID(), out, l.s.ttl.Milliseconds()).Err()
	if errors.Is(err, redis.Nil) {
		err = nil
	}
	return wrap("settle audit record", err)
}

// keys are the KEYS of the audit scripts for plan planID.
func (l *AuditLog) keys(planID string) []string {
	plan := l.s.keys.Plan(planID)
	if planID == "" {
		plan = l.s.keys.Plan("-") // in the slot of audit:{-}, and never a plan: the records of no plan keep the retention
	}
	return []string{l.s.keys.Audit(planID), l.s.keys.AuditOutcomes(planID), plan}
}

// pairs is attrs as JSON pairs.
func pairs(attrs []audit.Attr) [][2]string {
	out := make([][2]string, len(attrs))
	for i, a := range attrs {
		out[i] = [2]string{a.Key, a.Value}
	}
	return out
}

// attrsOf reads JSON pairs back.
func attrsOf(ps [][2]string) []audit.Attr {
	out := make([]audit.Attr, len(ps))
	for i, p := range ps {
		out[i] = audit.Attr{Key: p[0], Value: p[1]}
	}
	return out
}
