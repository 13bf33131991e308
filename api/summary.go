package api

import (
	"cmp"
	"net/http"
	"slices"
	"time"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/wire"
)

// SummaryFrom maps a plan summary to its wire form; now dates the slowest tasks' runningMs.
func SummaryFrom(s app.PlanSummary, now time.Time) wire.PlanSummary {
	p, sum := s.Plan, s.Summary
	stages := p.Stages()
	out := wire.PlanSummary{
		PlanID: p.ID(), Status: string(p.Status()), Reason: p.Reason(), Total: len(p.TaskIDs()), Missing: s.Missing,
		Statuses: map[string]int{}, Stages: make([]wire.StageCounts, 0, len(stages)+1),
		FailureClasses: []wire.ClassCount{}, Gates: []wire.GateCount{}, Slowest: []wire.SlowTask{},
	}
	for _, st := range task.Statuses {
		out.Statuses[string(st)] = sum.Statuses[st]
	}
	for i := 0; i <= len(stages); i++ {
		sc := wire.StageCounts{Index: i, Counts: map[string]int{}}
		if i < len(stages) {
			sc.Name = stages[i].Name
		}
		for st, n := range sum.Stages[i] {
			sc.Counts[string(st)] = n
		}
		out.Stages = append(out.Stages, sc)
		if n := sum.Stages[i][task.Waiting]; n > 0 && i < len(stages) {
			out.Gates = append(out.Gates, wire.GateCount{StageIndex: i, Stage: stages[i].Name, Waiting: n})
		}
	}
	for class, c := range sum.Classes {
		out.FailureClasses = append(out.FailureClasses, wire.ClassCount{Class: class, Count: c.Count, SampleTenantID: c.TenantID, SampleMessage: c.Message})
	}
	slices.SortFunc(out.FailureClasses, func(a, b wire.ClassCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Class, b.Class))
	})
	for _, r := range sum.Slowest {
		name := ""
		if r.Stage < len(stages) {
			name = stages[r.Stage].Name
		}
		out.Slowest = append(out.Slowest, wire.SlowTask{TaskID: r.ID, TenantID: r.TenantID, StageIndex: r.Stage, Stage: name,
			Since: r.Since.UTC(), RunningMs: max(now.Sub(r.Since).Milliseconds(), 0)})
	}
	return out
}

// planSummary is GET /v1/plans/{planId}/summary.
func (h *handlers) planSummary(w http.ResponseWriter, r *http.Request) {
	id, err := pathParam(r, "planId")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	s, err := h.svc.Summary(r.Context(), id)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.respond(w, r, http.StatusOK, SummaryFrom(s, time.Now()))
}
