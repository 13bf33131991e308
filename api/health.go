package api

import (
	"context"
	"net/http"
	"time"

	"github.com/executor-dev/executor/wire"
)

// healthz is GET /healthz: the process serves requests, and which executor it is.
func (h *handlers) healthz(w http.ResponseWriter, r *http.Request) {
	h.respond(w, r, http.StatusOK, wire.Health{Status: "ok", Executor: h.opts.Name})
}

// probeTimeout bounds GET /readyz's probe (Options.Probe).
const probeTimeout = 2 * time.Second

// readyz is GET /readyz: Options.Readiness with the executor's name, then, when that says
// ok, Options.Probe; 503 when the status is not "ok".
func (h *handlers) readyz(w http.ResponseWriter, r *http.Request) {
	health := h.opts.Readiness()
	if health.Status == "ok" && h.opts.Probe != nil {
		ctx, cancel := context.WithTimeout(r.Context(), probeTimeout)
		err := h.opts.Probe(ctx)
		cancel()
		if err != nil {
			health = wire.Health{Status: "unavailable", Redis: "unavailable", Reason: err.Error(), Topology: health.Topology}
		}
	}
	if health.Executor == "" {
		health.Executor = h.opts.Name
	}
	status := http.StatusOK
	if health.Status != "ok" {
		status = http.StatusServiceUnavailable
	}
	h.respond(w, r, status, health)
}
