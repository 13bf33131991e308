package api

import (
	"net/http"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/wire"
)

// ExecutorListFrom maps the executors as listed to their wire form.
func ExecutorListFrom(vs []app.ExecutorView) wire.ExecutorList {
	out := wire.ExecutorList{Executors: make([]wire.Executor, len(vs))}
	for i, v := range vs {
		out.Executors[i] = wire.Executor{
			Name: v.Name, Address: v.Address, Version: v.Version,
			StartedAt: v.StartedAt.UTC(), LastHeartbeat: v.LastHeartbeat.UTC(),
			Runs: v.Runs, Alive: v.Alive, Self: v.Self, Topology: v.Topology, Kinds: v.Kinds,
		}
	}
	return out
}

// listExecutors is GET /v1/executors: the executors sharing this one's store, alive or not.
func (h *handlers) listExecutors(w http.ResponseWriter, r *http.Request) {
	vs, err := h.svc.Executors(r.Context())
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.respond(w, r, http.StatusOK, ExecutorListFrom(vs))
}
