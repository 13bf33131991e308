package api

import (
	"encoding/json"
	"net/http"

	"github.com/executor-dev/executor/wire"
)

// respond writes v as a JSON response with status.
func (h *handlers) respond(w http.ResponseWriter, r *http.Request, status int, v any) {
	h.writeBody(w, r, mediaJSON, status, v)
}

// writeBody writes v, marshalled to JSON, with the given content type and status.
func (h *handlers) writeBody(w http.ResponseWriter, r *http.Request, contentType string, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil { // every value on the wire came from JSON: should not happen
		h.opts.Logger.Error("http response not marshalled", "request_id", requestIDOf(r), "err", err)
		contentType, status = wire.ProblemContentType, http.StatusInternalServerError
		body = []byte(`{"type":"` + wire.ProblemInternal + `","title":"Internal Server Error","status":500}`)
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
