package api

import (
	"net/http"
	"strings"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/wire"
)

// bulkTasks serves POST /v1/plans/{planId}/tasks/approve|reject|retry|cancel|rollback with an optional
// BulkTasksBody: the action on every task of the plan matching the body's filter, answering
// the counts and the skipped tasks.
func (h *handlers) bulkTasks(action app.BulkAction) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathParam(r, "planId")
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		var body wire.BulkTasksBody
		if err := h.decodeBody(w, r, &body, true); err != nil {
			h.writeError(w, r, err)
			return
		}
		req := bulkRequest(body, action)
		out, err := h.svc.BulkTasks(r.Context(), id, req)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		h.audit(r, "bulk-"+string(action), "plan_id", id, "status", joinStatuses(req.Filter.Statuses),
			"stage", req.Filter.Stage, "class", req.Filter.Class, "tenant_prefix", req.Filter.Tenant, "ring", req.Filter.Ring,
			"matched", out.Matched, "applied", out.Applied, "skipped", out.SkippedCount)
		h.respond(w, r, http.StatusOK, BulkResultFrom(id, action, out))
	}
}

// bulkRequest is the use case's request for b: statuses upper-cased (validated by
// app.Service.BulkTasks, each named "status[i]"), fromCheckpoint true unless false.
func bulkRequest(b wire.BulkTasksBody, action app.BulkAction) app.BulkRequest {
	req := app.BulkRequest{
		Action: action, Comment: b.Comment, FromCheckpoint: b.FromCheckpoint == nil || *b.FromCheckpoint,
		Filter: app.TaskFilter{Stage: b.Stage, Class: b.Class, Tenant: b.Tenant, Ring: b.Ring},
	}
	for _, s := range b.Status {
		req.Filter.Statuses = append(req.Filter.Statuses, task.Status(strings.ToUpper(s)))
	}
	return req
}

// BulkResultFrom maps what an action on a filter did to its wire form (skipped always a list).
func BulkResultFrom(planID string, action app.BulkAction, out app.BulkResult) wire.BulkResult {
	return wire.BulkResult{PlanID: planID, Action: string(action), Matched: out.Matched, Applied: out.Applied,
		SkippedCount: out.SkippedCount, Skipped: taskRefs(out.Skipped)}
}
