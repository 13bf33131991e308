package api

import "net/http"

// getTask is GET /v1/tasks/{taskId}: a task with its lease and checkpoint summary.
func (h *handlers) getTask(w http.ResponseWriter, r *http.Request) {
	id, err := pathParam(r, "taskId")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	v, err := h.svc.Task(r.Context(), id)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.respond(w, r, http.StatusOK, TaskFrom(v, true))
}
