package api

import (
	"context"
	"net/http"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/wire"
)

// decideTenant serves POST /v1/tenants/{tenantId}/approve|reject, with an optional
// DecisionBody, with one of the Service's gate decisions on the tenant's WAITING task,
// answering the task as it is afterwards. The plan-level decisions (approve or reject a canary
// wave) are planOp's.
func (h *handlers) decideTenant(decide func(*app.Service, context.Context, string, string) (app.TaskView, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathParam(r, "tenantId")
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		var body wire.DecisionBody
		if err := h.decodeBody(w, r, &body, true); err != nil {
			h.writeError(w, r, err)
			return
		}
		v, err := decide(h.svc, r.Context(), id, body.Comment)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		attrs := []any{"tenant_id", id, "task_id", v.Task.ID(), "status", v.Task.Status(), "with_comment", body.Comment != ""}
		if d := decisionFrom(v.Task); d != nil {
			attrs = append(attrs, "stage", d.Stage, "run", d.Run)
		}
		h.audit(r, actionOf(r), attrs...)
		h.respond(w, r, http.StatusOK, TaskFrom(v, true))
	}
}
