package api

import "net/http"

// tenantLock is GET /v1/tenants/{tenantId}/lock: who holds the tenant's lease, for how long
// yet, and the fence epoch of its latest task.
func (h *handlers) tenantLock(w http.ResponseWriter, r *http.Request) {
	id, err := pathParam(r, "tenantId")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	v, err := h.svc.TenantLock(r.Context(), id)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.respond(w, r, http.StatusOK, TenantLockFrom(v))
}

// unlockTenant is POST /v1/tenants/{tenantId}/unlock: remove the tenant's lease whoever
// holds it and fence the holder; a RUNNING task becomes INTERRUPTED.
func (h *handlers) unlockTenant(w http.ResponseWriter, r *http.Request) {
	id, err := pathParam(r, "tenantId")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	u, err := h.svc.UnlockTenant(r.Context(), id)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.audit(r, "unlock", "tenant_id", id, "released", u.Released, "previous_owner", u.Previous.Owner,
		"task_id", u.TaskID, "epoch", u.Epoch, "interrupted", u.Interrupted)
	h.respond(w, r, http.StatusOK, TenantUnlockFrom(u))
}
