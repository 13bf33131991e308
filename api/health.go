package api

import "net/http"

// healthz is GET /healthz: the process serves requests.
func (h *handlers) healthz(w http.ResponseWriter, r *http.Request) {
	h.respond(w, r, http.StatusOK, Health{Status: "ok"})
}

// readyz is GET /readyz: Options.Readiness, 503 when its status is not "ok".
func (h *handlers) readyz(w http.ResponseWriter, r *http.Request) {
	health := h.opts.Readiness()
	status := http.StatusOK
	if health.Status != "ok" {
		status = http.StatusServiceUnavailable
	}
	h.respond(w, r, status, health)
}
