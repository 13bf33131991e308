package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/executor-dev/executor/domain/audit"
)

// maxAuditFilter bounds an actor or action filter of AuditTrail.
const maxAuditFilter = 128

// AuditTrail returns a page of the operator actions q selects, newest first (audit.Query):
// one plan's, or every plan's (the newest plans first) when q names none.
func (s *Service) AuditTrail(ctx context.Context, q audit.Query) (audit.Page, error) {
	if q.PlanID != "" {
		if err := checkULID("plan", q.PlanID); err != nil {
			return audit.Page{}, err
		}
	}
	if q.Tenant != "" {
		if err := checkTenantID("tenant", q.Tenant); err != nil {
			return audit.Page{}, err
		}
	}
	for _, f := range []struct{ field, value string }{{"actor", q.Actor}, {"action", q.Action}} {
		if len(f.value) > maxAuditFilter {
			return audit.Page{}, invalid(f.field, "must be at most 128 bytes")
		}
	}
	if q.Action != "" && !knownAction(q.Action) {
		return audit.Page{}, invalid("action", fmt.Sprintf("%q is not an action; one of %s", q.Action, strings.Join(auditActions(), ", ")))
	}
	cur, resume, err := audit.ParseCursor(q.Cursor)
	if err != nil || (resume && q.PlanID != "" && cur.PlanID != q.PlanID) {
		return audit.Page{}, invalid("cursor", "is not the nextCursor of a page of this query")
	}
	if err := s.refuseRead(); err != nil {
		return audit.Page{}, err
	}
	if s.audit == nil {
		return audit.Page{}, nil
	}
	page, err := s.audit.List(ctx, q)
	if errors.Is(err, audit.ErrInvalid) {
		return audit.Page{}, invalid("cursor", "is not the nextCursor of a page of the audit trail")
	}
	return page, err
}

// auditActions are the actions a record may name, as GET /v1/audit's action filter takes them.
func auditActions() []string {
	out := []string{"submit", "pause", "resume", "cancel", "retry", "rollback", "approve", "reject", "skip", "unlock"}
	for _, a := range BulkActions {
		out = append(out, "bulk-"+string(a))
	}
	return out
}

// knownAction reports whether a is one of auditActions.
func knownAction(a string) bool { return slices.Contains(auditActions(), a) }
