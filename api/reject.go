package api

import (
	"net/http"

	"github.com/executor-dev/executor/app"
)

// rejectPlan serves POST /v1/plans/{planId}/reject: the brake on a canary or a rolling plan's
// current ring (nothing more starts). With ?rollback=true, the tenants the ring reached are
// rolled back too (every task of the ring that ran: app.Service.RejectPlanAndRollBack). It
// answers the plan as it is afterwards.
func (h *handlers) rejectPlan(w http.ResponseWriter, r *http.Request) {
	rollback, err := queryBool(r, "rollback")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if !rollback {
		h.planOp((*app.Service).RejectPlan)(w, r)
		return
	}
	id, err := pathParam(r, "planId")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	v, out, err := h.svc.RejectPlanAndRollBack(r.Context(), id)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.audit(r, "reject-rollback", "plan_id", id, "status", v.Plan.Status(), "ring", v.Plan.Ring().Index,
		"matched", out.Matched, "applied", out.Applied, "skipped", out.SkippedCount)
	h.respond(w, r, http.StatusOK, PlanFrom(v))
}
