package app

import (
	"context"
	"errors"

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
	if _, _, err := audit.ParseCursor(q.Cursor); err != nil {
		return audit.Page{}, invalid("cursor", "is not the nextCursor of a page of the audit trail")
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
