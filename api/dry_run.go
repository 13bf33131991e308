package api

import (
	"math"
	"net/http"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/wire"
)

// previewPage reads a dry run's page of tenants from ?previewOffset= and ?previewLimit=
// (1..app.MaxPreviewLimit, default app.DefaultPreviewLimit); either on a submission that is
// not a dry run is a mistake, refused naming it.
func previewPage(r *http.Request, dryRun bool) (app.PreviewPage, error) {
	q := r.URL.Query()
	if !dryRun {
		for _, name := range []string{"previewOffset", "previewLimit"} {
			if q.Has(name) {
				return app.PreviewPage{}, invalid(name, "only with dryRun=true: a submission answers no rendered tenants")
			}
		}
		return app.PreviewPage{}, nil
	}
	offset, err := queryInt(r, "previewOffset", 0, 0, math.MaxInt32)
	if err != nil {
		return app.PreviewPage{}, err
	}
	limit, err := queryInt(r, "previewLimit", app.DefaultPreviewLimit, 1, app.MaxPreviewLimit)
	if err != nil {
		return app.PreviewPage{}, err
	}
	return app.PreviewPage{Offset: offset, Limit: limit}, nil
}

// DryRunFrom maps a dry-run submission to its wire form: a summary of the plan, the page of
// tenants it renders, the conflicts and the rings. Conflicts is never nil.
func DryRunFrom(sub *app.Submission) wire.DryRun {
	out := wire.DryRun{
		Kind: wire.KindDryRun, DryRun: true, Tenants: make([]wire.TenantPreview, len(sub.Preview)), Conflicts: []string{},
		Page: wire.PreviewPage{Offset: sub.Page.Offset, Limit: sub.Page.Limit, NextOffset: sub.Page.Next(sub.Tenants)},
	}
	out.Conflicts = append(out.Conflicts, sub.Conflicts...)
	out.Warnings = sub.Notes
	for _, h := range sub.ConflictHolders {
		out.ConflictTasks = append(out.ConflictTasks, wire.ConflictTask{TenantID: h.Tenant, PlanID: h.PlanID, TaskID: h.TaskID, Status: string(h.Status)})
	}
	for i, tp := range sub.Preview {
		stages := make([]wire.RenderedStage, len(tp.Stages))
		for j, s := range tp.Stages {
			stages[j] = wire.RenderedStage{Name: s.Name, Kind: s.Kind, Params: s.Params}
			if m := s.Measurement; m != nil {
				stages[j].Measurement = &wire.Measurement{At: m.At, Value: m.Value, Verdict: string(m.Verdict), Message: m.Message}
			}
		}
		out.Tenants[i] = wire.TenantPreview{TenantID: tp.TenantID, Stages: stages}
	}
	for _, r := range sub.Rings {
		rp := wire.RingPreview{Wave: r.Wave, Tenants: append([]string{}, r.Tenants...)}
		for _, a := range r.Analysis {
			m := a.Measurement
			rp.Analysis = append(rp.Analysis, wire.AnalysisPreview{Name: a.Name,
				Measurement: wire.Measurement{At: m.At, Value: m.Value, Verdict: string(m.Verdict), Message: m.Message}})
		}
		out.Rings = append(out.Rings, rp)
	}
	out.Summary = wire.DryRunSummary{Tenants: sub.Tenants, Conflicts: len(out.Conflicts), Rings: len(out.Rings)}
	return out
}
