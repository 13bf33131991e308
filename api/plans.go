package api

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/wire"
)

// MaxIdempotencyKeyLength bounds an Idempotency-Key (wire.IdempotencyKeyHeader).
const MaxIdempotencyKeyLength = 200

// DefaultPlanPageSize is the page size of GET /v1/plans without ?limit=.
const DefaultPlanPageSize = 50

// submitPlan is POST /v1/plans: create a plan (201), replay an idempotent submission (200), or
// preview one with ?dryRun=true (200).
func (h *handlers) submitPlan(w http.ResponseWriter, r *http.Request) {
	dryRun, err := queryBool(r, "dryRun")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	key, err := idempotencyKey(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	page, err := previewPage(r, dryRun)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	var body wire.PlanRequest
	shape, err := h.decodeLenient(w, r, &body) // unknown fields, wrong types: reported with the rest
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	req, err := submitRequest(body)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	req.Violations = append(shape, req.Violations...)
	req.IdempotencyKey, req.DryRun, req.Page = key, dryRun, page
	sub, err := h.svc.Submit(r.Context(), req)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if dryRun {
		h.respond(w, r, http.StatusOK, DryRunFrom(sub))
		return
	}
	h.audit(r, "submit", "plan_id", sub.Plan.Plan.ID(), "plan_name", sub.Plan.Plan.Name(),
		"tenants", len(req.Tenants), "stages", len(req.Stages), "replayed", sub.Replayed)
	w.Header().Set("Location", "/v1/plans/"+sub.Plan.Plan.ID())
	status := http.StatusCreated
	if sub.Replayed {
		w.Header().Set(wire.IdempotentReplayedHeader, "true")
		status = http.StatusOK
	}
	out := PlanFrom(sub.Plan)
	out.Warnings = sub.Notes
	h.respond(w, r, status, out)
}

// idempotencyKey returns the request's Idempotency-Key: absent, or 1 to 200 visible ASCII
// characters sent once.
func idempotencyKey(r *http.Request) (string, error) {
	values := r.Header.Values(wire.IdempotencyKeyHeader)
	switch len(values) {
	case 0:
		return "", nil
	case 1:
	default:
		return "", invalid(wire.IdempotencyKeyHeader, "must be sent once")
	}
	key := values[0]
	ok := len(key) >= 1 && len(key) <= MaxIdempotencyKeyLength
	for i := 0; ok && i < len(key); i++ {
		ok = key[i] > ' ' && key[i] < 0x7f
	}
	if !ok {
		return "", invalid(wire.IdempotencyKeyHeader,
			fmt.Sprintf("must be 1 to %d visible ASCII characters", MaxIdempotencyKeyLength))
	}
	return key, nil
}

// listPlans is GET /v1/plans: plans newest first, ?status=, ?label=key=value (repeated: all
// must match), ?limit= and ?cursor= (the nextCursor of the previous page).
func (h *handlers) listPlans(w http.ResponseWriter, r *http.Request) {
	limit, err := queryInt(r, "limit", DefaultPlanPageSize, 1, app.MaxListLimit)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	withIDs, err := includeTaskIDs(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	labels, err := labelSelector(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	q := r.URL.Query()
	resume := ""
	views, err := h.svc.ListPlans(r.Context(), plan.Filter{
		Status: plan.Status(strings.ToUpper(q.Get("status"))), Labels: labels, Before: q.Get("cursor"), Limit: limit,
		Resume: &resume,
	})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	out := wire.PlanList{Plans: make([]wire.Plan, len(views))}
	for i, v := range views {
		out.Plans[i] = PlanFrom(v)
		if !withIDs {
			out.Plans[i].TaskIDs = nil
		}
	}
	switch {
	case resume != "": // a page by labels that stopped at its scan bound
		out.NextCursor = resume
	case len(views) == limit:
		out.NextCursor = views[len(views)-1].Plan.ID()
	}
	h.respond(w, r, http.StatusOK, out)
}

// getPlan is GET /v1/plans/{planId}; ?wait=30s long-polls until the plan ends or the wait
// passes.
func (h *handlers) getPlan(w http.ResponseWriter, r *http.Request) {
	id, err := pathParam(r, "planId")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	wait, waiting, err := queryDuration(r, "wait")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	withIDs, err := includeTaskIDs(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	var v app.PlanView
	if waiting {
		v, err = h.svc.WaitPlan(r.Context(), id, wait)
	} else {
		v, err = h.svc.Plan(r.Context(), id)
	}
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	out := PlanFrom(v)
	if !withIDs {
		out.TaskIDs = nil
	}
	h.respond(w, r, http.StatusOK, out)
}

// planTasks is GET /v1/plans/{planId}/tasks: a page of the plan's tasks, filtered by
// ?status= (a comma list), ?stage=, ?class=, ?tenant= (a prefix), in ?sort= order, with
// ?limit=, ?cursor= (the nextCursor of the previous page) and the deprecated ?offset=; the
// answer counts the matching tasks in total.
func (h *handlers) planTasks(w http.ResponseWriter, r *http.Request) {
	id, err := pathParam(r, "planId")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	offset, err := queryInt(r, "offset", 0, 0, math.MaxInt32)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	limit, err := queryInt(r, "limit", app.MaxListLimit, 1, app.MaxListLimit)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	q := r.URL.Query()
	page, err := h.svc.PlanTasks(r.Context(), id, app.TaskQuery{
		Filter: filterOf(q), Sort: q.Get("sort"), Cursor: q.Get("cursor"), Offset: offset, Limit: limit,
	})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.respond(w, r, http.StatusOK, TaskListFrom(page))
}

// planOp serves POST /v1/plans/{planId}/pause|resume|cancel|approve|reject with one of the
// Service's plan controls, answering the plan as it is afterwards.
func (h *handlers) planOp(op func(*app.Service, context.Context, string) (app.PlanView, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathParam(r, "planId")
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		v, err := op(h.svc, r.Context(), id)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		attrs := []any{"plan_id", id, "status", v.Plan.Status()}
		if ph := v.Plan.Phase(); ph != "" {
			attrs = append(attrs, "phase", ph)
		}
		h.audit(r, actionOf(r), attrs...)
		h.respond(w, r, http.StatusOK, PlanFrom(v))
	}
}

// resumePlan is POST /v1/plans/{planId}/resume with an optional wire.ResumeBody: the plan and
// the tasks its pause paused resume; with all, the tasks paused one by one too.
func (h *handlers) resumePlan(w http.ResponseWriter, r *http.Request) {
	var body wire.ResumeBody
	if err := h.decodeBody(w, r, &body, true); err != nil {
		h.writeError(w, r, err)
		return
	}
	h.planOp(func(s *app.Service, ctx context.Context, id string) (app.PlanView, error) {
		return s.ResumePlan(ctx, id, body.All)
	})(w, r)
}
