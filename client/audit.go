package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/executor-dev/executor/wire"
)

// AuditQuery selects operator actions of the audit trail (GET /v1/audit). Every field is
// optional; the filters (Plan, Tenant, Actor, Action) keep the records matching all of them.
type AuditQuery struct {
	Plan   string // only this plan's records (a plan id); without, every plan's, the newest plans first
	Tenant string // only the actions on this tenant
	Actor  string // only the actions of this token holder ("anonymous": those of tokens without a name, or of an open API)
	Action string // only this action: submit, pause, resume, cancel, retry, rollback, approve, reject, unlock, bulk-<action>
	Cursor string // the page after this one: a previous page's NextCursor
	Limit  int    // at most this many records (0: the server's default, 100; at most 1000)
}

// values is q as the trail's query parameters.
func (q AuditQuery) values() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"plan": q.Plan, "tenant": q.Tenant, "actor": q.Actor,
		"action": q.Action, "cursor": q.Cursor} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return v
}

// AuditTrail returns one page of the operator actions q selects, newest first (GET
// /v1/audit): who asked for each (actor and role), what was asked, and what came of it
// (applied, refused with its code, or pending). NextCursor, when set, is q.Cursor of the next
// page. A malformed filter or cursor is a 400 *Error naming it.
func (c *Client) AuditTrail(ctx context.Context, q AuditQuery) (*wire.AuditPage, error) {
	var out wire.AuditPage
	if err := c.do(ctx, request{method: http.MethodGet, path: "/v1/audit", query: q.values()}, &out); err != nil {
		return nil, err
	}
	if out.Records == nil {
		out.Records = []wire.AuditRecord{}
	}
	return &out, nil
}
