package redisrepo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/executor-dev/executor/domain/audit"
)

// auditChunk is how many stream entries one XREVRANGE of a listing reads.
const auditChunk = 500

// auditPlansPerPage bounds the plans one listing of every plan's records reads: a page that
// reached it without filling up ends there, its Next going on with the following plan.
const auditPlansPerPage = 200

// top is the position of a plan's newest record in a cursor: its records from the newest.
const top = "+"

// listOnline reads a page of the records q selects from Redis: one plan's stream when q
// names the plan; else the streams of the plans newest first (the plans sorted set), that of
// no plan last.
func (l *AuditLog) listOnline(ctx context.Context, q audit.Query) (audit.Page, error) {
	cur, resume, err := audit.ParseCursor(q.Cursor)
	if err != nil {
		return audit.Page{}, err
	}
	if !resume {
		cur = audit.Cursor{PlanID: q.PlanID, Pos: top}
	}
	if q.PlanID != "" && cur.PlanID != q.PlanID {
		return audit.Page{}, fmt.Errorf("%w: cursor %q is not one of plan %s", audit.ErrInvalid, q.Cursor, q.PlanID)
	}
	page := audit.Page{}
	limit := audit.PageLimit(q.Limit)
	if q.PlanID != "" {
		next, more, err := l.scanPlan(ctx, q, cur, limit, &page)
		if more {
			page.Next = audit.Cursor{PlanID: q.PlanID, Pos: next}.String()
		}
		return page, err
	}
	plans, err := l.plansFrom(ctx, cur.PlanID, !resume)
	if err != nil {
		return audit.Page{}, err
	}
	for i, id := range plans {
		if i == auditPlansPerPage {
			page.Next = audit.Cursor{PlanID: id, Pos: top}.String()
			return page, nil
		}
		c := audit.Cursor{PlanID: id, Pos: top}
		if i == 0 && resume {
			c = cur
		}
		next, more, err := l.scanPlan(ctx, q, c, limit, &page)
		if err != nil || more {
			if more {
				page.Next = audit.Cursor{PlanID: id, Pos: next}.String()
			}
			return page, err
		}
	}
	return page, nil
}

// plansFrom lists the plans whose records a listing of every plan reads, from plan from on
// ("" for none: the newest plan; a plan no longer listed: the records of no plan only), at
// most auditPlansPerPage + 1, the records of no plan ("") last; first: the first page.
func (l *AuditLog) plansFrom(ctx context.Context, from string, first bool) ([]string, error) {
	start := int64(0)
	switch {
	case first:
	case from == "":
		return []string{""}, nil
	default:
		rank, err := l.s.client.ZRevRank(ctx, l.s.keys.Plans(), from).Result()
		if errors.Is(err, redis.Nil) {
			return []string{""}, nil
		}
		if err != nil {
			return nil, wrap("audit plans", err)
		}
		start = rank
	}
	ids, err := l.s.client.ZRevRange(ctx, l.s.keys.Plans(), start, start+auditPlansPerPage).Result()
	if err != nil {
		return nil, wrap("audit plans", err)
	}
	if len(ids) <= auditPlansPerPage {
		ids = append(ids, "")
	}
	return ids, nil
}

// scanPlan adds to page the records of plan c.PlanID that q selects, from c.Pos down, until
// the page holds limit; more: it found one more that q selects, which the next page starts
// with, going on from position next.
func (l *AuditLog) scanPlan(ctx context.Context, q audit.Query, c audit.Cursor, limit int, page *audit.Page) (next string, more bool, err error) {
	key := l.s.keys.Audit(c.PlanID)
	from, last := c.Pos, c.Pos
	if from != top {
		from = "(" + from // exclusive: after the last one returned
	}
	for {
		entries, err := l.s.client.XRevRangeN(ctx, key, from, "-", auditChunk).Result()
		if err != nil {
			return "", false, wrap("audit records", err)
		}
		recs, ids, err := l.decode(ctx, c.PlanID, entries)
		if err != nil {
			return "", false, err
		}
		for i, r := range recs {
			if !r.Matches(q) {
				continue
			}
			if len(page.Records) == limit {
				return last, true, nil
			}
			page.Records = append(page.Records, r)
			last = ids[i]
		}
		if len(entries) < auditChunk {
			return "", false, nil
		}
		from = "(" + entries[len(entries)-1].ID
	}
}

// decode reads a chunk of stream entries of plan planID with their outcomes.
func (l *AuditLog) decode(ctx context.Context, planID string, entries []redis.XMessage) ([]*audit.Record, []string, error) {
	if len(entries) == 0 {
		return nil, nil, nil
	}
	recIDs := make([]string, len(entries))
	for i, e := range entries {
		recIDs[i], _ = e.Values["id"].(string)
	}
	outs, err := l.s.client.HMGet(ctx, l.s.keys.AuditOutcomes(planID), recIDs...).Result()
	if err != nil {
		return nil, nil, wrap("audit outcomes", err)
	}
	recs := make([]*audit.Record, 0, len(entries))
	ids := make([]string, 0, len(entries))
	for i, e := range entries {
		raw, _ := e.Values["r"].(string)
		out, _ := outs[i].(string)
		r, err := decodeAudit(recIDs[i], raw, out)
		if err != nil {
			return nil, nil, err
		}
		recs, ids = append(recs, r), append(ids, e.ID)
	}
	return recs, ids, nil
}

// decodeAudit reads one record and its outcome ("" when none was written).
func decodeAudit(id, raw, out string) (*audit.Record, error) {
	var rj recordJSON
	if err := json.Unmarshal([]byte(raw), &rj); err != nil {
		return nil, fmt.Errorf("redisrepo: audit record %s: %w", id, err)
	}
	var o audit.Outcome
	if out != "" {
		var oj outcomeJSON
		if err := json.Unmarshal([]byte(out), &oj); err != nil {
			return nil, fmt.Errorf("redisrepo: audit outcome %s: %w", id, err)
		}
		o = audit.Outcome{Result: audit.Result(oj.Result), At: oj.At, Code: oj.Code, Attrs: attrsOf(oj.Attrs)}
	}
	return audit.Load(audit.Fields{ID: id, At: rj.At, Action: rj.Action, PlanID: rj.Plan, Tenant: rj.Tenant,
		TaskID: rj.Task, Request: attrsOf(rj.Attrs), Origin: audit.Origin{Actor: rj.Actor, Role: rj.Role,
			RequestID: rj.Request, Executor: rj.Executor}}, o)
}
