package api

import (
	"context"
	"net/http"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/wire"
)

// tenantTask is GET /v1/tenants/{tenantId}/task: the tenant's latest task with its lease and
// checkpoint summary; ?wait=30s long-polls until that task is at rest (ended, WAITING, PAUSED
// or INTERRUPTED) or the wait passes.
func (h *handlers) tenantTask(w http.ResponseWriter, r *http.Request) {
	h.readTask(w, r, "tenantId", h.svc.TenantTask, h.svc.WaitTenantTask)
}

// tenantCheckpoint is GET /v1/tenants/{tenantId}/checkpoint: the checkpoint of the tenant's
// latest task, 404 when it has none.
func (h *handlers) tenantCheckpoint(w http.ResponseWriter, r *http.Request) {
	id, err := pathParam(r, "tenantId")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	cp, err := h.svc.TenantCheckpoint(r.Context(), id)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.respond(w, r, http.StatusOK, CheckpointFrom(id, cp))
}

// retryTenant is POST /v1/tenants/{tenantId}/retry with an optional RetryBody: run the
// tenant's latest task again, from its checkpoint unless fromCheckpoint is false.
func (h *handlers) retryTenant(w http.ResponseWriter, r *http.Request) {
	id, err := pathParam(r, "tenantId")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	var body wire.RetryBody
	if err := h.decodeBody(w, r, &body, true); err != nil {
		h.writeError(w, r, err)
		return
	}
	fromCheckpoint := body.FromCheckpoint == nil || *body.FromCheckpoint
	v, err := h.svc.RetryTenant(r.Context(), id, fromCheckpoint)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.audit(r, "retry", "tenant_id", id, "task_id", v.Task.ID(), "from_checkpoint", fromCheckpoint, "attempt", v.Task.Attempt())
	h.respond(w, r, http.StatusOK, TaskFrom(v, true))
}

// tenantOp serves POST /v1/tenants/{tenantId}/pause|resume|cancel with one of the Service's
// tenant controls, answering the task as it is afterwards.
func (h *handlers) tenantOp(op func(*app.Service, context.Context, string) (app.TaskView, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathParam(r, "tenantId")
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		v, err := op(h.svc, r.Context(), id)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		h.audit(r, actionOf(r), "tenant_id", id, "task_id", v.Task.ID(), "status", v.Task.Status())
		h.respond(w, r, http.StatusOK, TaskFrom(v, true))
	}
}

// skipTenant is POST /v1/tenants/{tenantId}/skip with an optional wire.SkipBody: the tenant's
// latest task ends SKIPPED (it does not run, and has not completed), its plan settles.
func (h *handlers) skipTenant(w http.ResponseWriter, r *http.Request) {
	var body wire.SkipBody
	if err := h.decodeBody(w, r, &body, true); err != nil {
		h.writeError(w, r, err)
		return
	}
	h.tenantOp(func(s *app.Service, ctx context.Context, id string) (app.TaskView, error) {
		return s.SkipTenant(ctx, id, body.Comment)
	})(w, r)
}
