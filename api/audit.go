package api

import (
	"net/http"
	"path"
)

// audit logs one operator action that changed something (a submission, a pause, resume,
// cancel or retry) at Info: msg "operator action", the request id, the action and what it
// touched. Names come from the caller (a plan's name may hold any text): slog's handlers
// escape them, so a name with CR/LF stays inside one record. Bodies, params and tokens are
// never logged.
func (h *handlers) audit(r *http.Request, action string, attrs ...any) {
	h.opts.Logger.Info("operator action", append([]any{"request_id", requestIDOf(r), "action", action}, attrs...)...)
}

// actionOf names the control a POST .../pause|resume|cancel route performs.
func actionOf(r *http.Request) string { return path.Base(r.URL.Path) }
