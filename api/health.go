package api

import "net/http"

// healthz is GET /healthz: the process serves requests, and which executor it is.
func (h *handlers) healthz(w http.ResponseWriter, r *http.Request) {
	h.respond(w, r, http.StatusOK, Health{Status: "ok", Executor: h.opts.Name})
}

// readyz is GET /readyz: Options.Readiness with the executor's name, 503 when its status is not "ok".
func (h *handlers) readyz(w http.ResponseWriter, r *http.Request) {
	health := h.opts.Readiness()
	if health.Executor == "" {
		health.Executor = h.opts.Name
	}
	status := http.StatusOK
	if health.Status != "ok" {
		status = http.StatusServiceUnavailable
	}
	h.respond(w, r, status, health)
}
