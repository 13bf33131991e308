package api

import (
	"cmp"
	"net/http"
	"slices"
	"time"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/task"
)

// PlanSummary is GET /v1/plans/{planId}/summary: a plan's tasks counted without listing them.
type PlanSummary struct {
	PlanID string `json:"planId"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Total counts the plan's tasks; Missing those the store no longer holds (not counted
	// anywhere else).
	Total   int `json:"total"`
	Missing int `json:"missing,omitempty"`
	// Statuses counts the tasks by status (every status, 0 included).
	Statuses map[string]int `json:"statuses"`
	// Stages counts the tasks by current stage and status: one entry per stage of the plan,
	// in order, then one whose index is the number of stages (every stage done), each with the
	// statuses that have tasks there.
	Stages []StageCounts `json:"stages"`
	// FailureClasses counts the tasks whose last error has a class, most first, each with a
	// sample tenant and its message.
	FailureClasses []ClassCount `json:"failureClasses"`
	// Gates lists the stages with WAITING tasks (at their approval gate), in stage order.
	Gates []GateCount `json:"gates"`
	// Slowest are the RUNNING tasks longest at their current stage, longest first.
	Slowest []SlowTask `json:"slowest"`
}

// StageCounts counts the tasks at one stage by status.
type StageCounts struct {
	Index  int            `json:"index"`
	Name   string         `json:"name,omitempty"` // absent past the last stage
	Counts map[string]int `json:"counts"`
}

// ClassCount counts the tasks of one failure class, with a sample.
type ClassCount struct {
	Class          string `json:"class"`
	Count          int    `json:"count"`
	SampleTenantID string `json:"sampleTenantId"`
	SampleMessage  string `json:"sampleMessage"`
}

// GateCount counts the tasks WAITING at one stage's gate.
type GateCount struct {
	StageIndex int    `json:"stageIndex"`
	Stage      string `json:"stage"`
	Waiting    int    `json:"waiting"`
}

// SlowTask is a RUNNING task and how long it has been at its stage.
type SlowTask struct {
	TaskID     string    `json:"taskId"`
	TenantID   string    `json:"tenantId"`
	StageIndex int       `json:"stageIndex"`
	Stage      string    `json:"stage"`
	Since      time.Time `json:"since"`
	RunningMs  int64     `json:"runningMs"`
}

// SummaryFrom maps a plan summary to its wire form; now dates the slowest tasks' runningMs.
func SummaryFrom(s app.PlanSummary, now time.Time) PlanSummary {
	p, sum := s.Plan, s.Summary
	stages := p.Stages()
	out := PlanSummary{
		PlanID: p.ID(), Status: string(p.Status()), Reason: p.Reason(), Total: len(p.TaskIDs()), Missing: s.Missing,
		Statuses: map[string]int{}, Stages: make([]StageCounts, 0, len(stages)+1),
		FailureClasses: []ClassCount{}, Gates: []GateCount{}, Slowest: []SlowTask{},
	}
	for _, st := range task.Statuses {
		out.Statuses[string(st)] = sum.Statuses[st]
	}
	for i := 0; i <= len(stages); i++ {
		sc := StageCounts{Index: i, Counts: map[string]int{}}
		if i < len(stages) {
			sc.Name = stages[i].Name
		}
		for st, n := range sum.Stages[i] {
			sc.Counts[string(st)] = n
		}
		out.Stages = append(out.Stages, sc)
		if n := sum.Stages[i][task.Waiting]; n > 0 && i < len(stages) {
			out.Gates = append(out.Gates, GateCount{StageIndex: i, Stage: stages[i].Name, Waiting: n})
		}
	}
	for class, c := range sum.Classes {
		out.FailureClasses = append(out.FailureClasses, ClassCount{Class: class, Count: c.Count, SampleTenantID: c.TenantID, SampleMessage: c.Message})
	}
	slices.SortFunc(out.FailureClasses, func(a, b ClassCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Class, b.Class))
	})
	for _, r := range sum.Slowest {
		name := ""
		if r.Stage < len(stages) {
			name = stages[r.Stage].Name
		}
		out.Slowest = append(out.Slowest, SlowTask{TaskID: r.ID, TenantID: r.TenantID, StageIndex: r.Stage, Stage: name,
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
