package api

import (
	"net/http"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/auth"
	"github.com/executor-dev/executor/domain/audit"
	"github.com/executor-dev/executor/wire"
)

// origin makes every request's context carry who asks (the token's holder and role, the
// request id, this executor), so that the actions it takes are recorded with it.
func (h *handlers) origin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o := audit.Origin{Actor: app.Anonymous, RequestID: requestIDOf(r), Executor: h.opts.Name}
		if who, ok := auth.HolderFrom(r.Context()); ok {
			o.Actor, o.Role = who.Actor(), string(who.Role)
		}
		next.ServeHTTP(w, r.WithContext(app.WithOrigin(r.Context(), o)))
	})
}

// auditTrail serves GET /v1/audit?plan=&tenant=&actor=&action=&cursor=&limit=: a page of the
// operator actions, newest first.
func (h *handlers) auditTrail(w http.ResponseWriter, r *http.Request) {
	limit, err := queryInt(r, "limit", audit.DefaultLimit, 1, audit.MaxLimit)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	q := r.URL.Query()
	page, err := h.svc.AuditTrail(r.Context(), audit.Query{
		PlanID: q.Get("plan"), Tenant: q.Get("tenant"), Actor: q.Get("actor"), Action: q.Get("action"),
		Cursor: q.Get("cursor"), Limit: limit,
	})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.respond(w, r, http.StatusOK, AuditPageFrom(page))
}

// AuditPageFrom maps a page of the audit trail to its wire form.
func AuditPageFrom(p audit.Page) wire.AuditPage {
	out := wire.AuditPage{Records: make([]wire.AuditRecord, len(p.Records)), NextCursor: p.Next}
	for i, r := range p.Records {
		out.Records[i] = AuditRecordFrom(r)
	}
	return out
}

// AuditRecordFrom maps one record to its wire form.
func AuditRecordFrom(r *audit.Record) wire.AuditRecord {
	f, o := r.Fields(), r.Outcome()
	out := wire.AuditRecord{
		ID: f.ID, At: f.At, Actor: f.Origin.Actor, Role: f.Origin.Role, RequestID: f.Origin.RequestID,
		Executor: f.Origin.Executor, Action: f.Action, PlanID: f.PlanID, Tenant: f.Tenant, TaskID: f.TaskID,
		Request: attrMap(f.Request), Result: string(o.Result), Code: o.Code, Outcome: attrMap(o.Attrs),
	}
	if o.Result == audit.Pending {
		out.Result = "pending"
	} else {
		at := o.At
		out.SettledAt = &at
	}
	return out
}

// attrMap is attrs as a JSON object (nil when none).
func attrMap(attrs []audit.Attr) map[string]string {
	if len(attrs) == 0 {
		return nil
	}
	out := make(map[string]string, len(attrs))
	for _, a := range attrs {
		out[a.Key] = a.Value
	}
	return out
}
