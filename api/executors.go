package api

import (
	"net/http"
	"time"

	"github.com/executor-dev/executor/app"
)

// Executor is one executor of the cluster as GET /v1/executors lists it.
type Executor struct {
	Name          string    `json:"name"`
	Address       string    `json:"address"`
	Version       string    `json:"version,omitempty"`
	StartedAt     time.Time `json:"startedAt"`
	LastHeartbeat time.Time `json:"lastHeartbeat"`
	Runs          int       `json:"runs"`  // tasks it was running at its last heartbeat
	Alive         bool      `json:"alive"` // it refreshed its liveness within the lease TTL
	Self          bool      `json:"self"`  // it is the executor that answered
}

// ExecutorList is the body of GET /v1/executors, sorted by name.
type ExecutorList struct {
	Executors []Executor `json:"executors"`
}

// ExecutorListFrom maps the executors as listed to their wire form.
func ExecutorListFrom(vs []app.ExecutorView) ExecutorList {
	out := ExecutorList{Executors: make([]Executor, len(vs))}
	for i, v := range vs {
		out.Executors[i] = Executor{
			Name: v.Name, Address: v.Address, Version: v.Version,
			StartedAt: v.StartedAt.UTC(), LastHeartbeat: v.LastHeartbeat.UTC(),
			Runs: v.Runs, Alive: v.Alive, Self: v.Self,
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
