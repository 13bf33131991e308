package api

import (
	"net/http"
	"strings"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/wire"
)

// retryPlan is POST /v1/plans/{planId}/retry with an optional PlanRetryBody: retry every task
// of the plan in one of the selected statuses, answering the plan afterwards with the tasks
// retried and skipped.
func (h *handlers) retryPlan(w http.ResponseWriter, r *http.Request) {
	id, err := pathParam(r, "planId")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	var body wire.PlanRetryBody
	if err := h.decodeBody(w, r, &body, true); err != nil {
		h.writeError(w, r, err)
		return
	}
	req := retryPlanRequest(body)
	out, err := h.svc.RetryPlan(r.Context(), id, req)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	statuses := req.Statuses
	if len(statuses) == 0 {
		statuses = app.DefaultRetryStatuses
	}
	h.audit(r, "retry", "plan_id", id, "statuses", joinStatuses(statuses), "from_checkpoint", req.FromCheckpoint,
		"retried", len(out.Retried), "skipped", len(out.Skipped))
	h.respond(w, r, http.StatusOK, PlanRetryFrom(out))
}

// retryPlanRequest is the use case's request for b: statuses upper-cased (they are validated by
// app.Service.RetryPlan, each named "status[i]"), fromCheckpoint true unless false.
func retryPlanRequest(b wire.PlanRetryBody) app.RetryPlanRequest {
	req := app.RetryPlanRequest{FromCheckpoint: b.FromCheckpoint == nil || *b.FromCheckpoint}
	for _, s := range b.Status {
		req.Statuses = append(req.Statuses, task.Status(strings.ToUpper(s)))
	}
	return req
}

func joinStatuses(statuses []task.Status) string {
	names := make([]string, len(statuses))
	for i, s := range statuses {
		names[i] = string(s)
	}
	return strings.Join(names, ",")
}
