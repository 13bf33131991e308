package api

import (
	"net/http"
	"path"

	"github.com/executor-dev/executor/auth"
)

// audit logs one operator action that changed something at Info: a submission; a pause,
// resume, cancel or retry of a plan or tenant (a plan's retry with how many tasks it retried
// and skipped); an approval or rejection of a tenant's gate or of a plan's canary wave; an
// unlock (with the previous owner and the new fence epoch). The record is msg "operator
// action", the request id, the action and what it touched, and, when tokens are configured,
// the caller's name (actor: the token's holder, "anonymous" for a token without one) and role. Names come from the caller (a plan's name may hold any text): slog's
// handlers escape them, so a name with CR/LF stays inside one record. Bodies (a decision's
// comment included), params and tokens are never logged.
func (h *handlers) audit(r *http.Request, action string, attrs ...any) {
	head := []any{"request_id", requestIDOf(r), "action", action}
	if who, ok := auth.HolderFrom(r.Context()); ok { // with tokens: who acted, with which role
		head = append(head, "actor", who.Actor(), "role", string(who.Role))
	}
	h.opts.Logger.Info("operator action", append(head, attrs...)...)
}

// actionOf names the control a POST .../pause|resume|cancel|approve|reject route performs.
func actionOf(r *http.Request) string { return path.Base(r.URL.Path) }
