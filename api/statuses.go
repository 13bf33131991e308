package api

import (
	"net/http"

	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/wire"
)

// taskStatuses answers GET /v1/task-statuses: every task status with its rules, as the
// domain defines them (task.Status's methods).
func (h *handlers) taskStatuses(w http.ResponseWriter, r *http.Request) {
	out := wire.TaskStatusRules{Statuses: make([]wire.TaskStatusRule, len(task.Statuses))}
	for i, s := range task.Statuses {
		out.Statuses[i] = wire.TaskStatusRule{
			Status: string(s), Terminal: s.Terminal(), Settled: s.Settled(), AtRest: s.AtRest(),
			Retryable: s.Retryable(), Cancellable: s.Cancellable(), Undoable: s.Undoable(), Skippable: s.Skippable(),
		}
	}
	h.respond(w, r, http.StatusOK, out)
}
