package app

import (
	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/lease"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// Progress counts a plan's tasks per status. Total counts every task of the plan, those the
// store no longer holds (Missing, in the plan's order) included.
type Progress struct {
	Total   int
	Counts  map[task.Status]int
	Missing []MissingTask
}

// PlanView is a plan with its progress.
type PlanView struct {
	Plan     *plan.Plan
	Progress Progress
}

// TaskView is a task with its checkpoint (nil when none was saved), its tenant's lease and
// what its attempts printed (Transcripts, by ledger entry: read for one task, never for a
// listing).
type TaskView struct {
	Task        *task.Task
	Checkpoint  *checkpoint.Checkpoint
	Lease       LeaseView
	Transcripts map[task.AttemptKey]stage.Transcript
}

// LeaseView tells whether a run holds the task's tenant, and which.
type LeaseView struct {
	Held   bool
	Holder lease.Holder
}

// progressOf counts statuses; an empty one (a missing task) counts in the total alone.
func progressOf(statuses []task.Status) Progress {
	p := Progress{Total: len(statuses), Counts: map[task.Status]int{}}
	for _, st := range statuses {
		if st != "" {
			p.Counts[st]++
		}
	}
	return p
}

// Outcomes of an ended plan (PlanView.Outcome).
const (
	OutcomeDone           = "done"                 // COMPLETED: every tenant deployed
	OutcomeDoneExceptions = "done_with_exceptions" // COMPLETED: the others deployed, some cancelled or skipped one by one
	OutcomeFailed         = "failed"               // FAILED
	OutcomeCancelled      = "cancelled"            // CANCELLED
)

// Outcome is how the plan ended, "" while it has not: a COMPLETED plan is OutcomeDone when
// every task completed, OutcomeDoneExceptions when an operator cancelled or skipped some one
// by one (Exceptions counts them).
func (v PlanView) Outcome() string {
	switch v.Plan.Status() {
	case plan.Completed:
		if v.Exceptions() > 0 {
			return OutcomeDoneExceptions
		}
		return OutcomeDone
	case plan.Failed:
		return OutcomeFailed
	case plan.Cancelled:
		return OutcomeCancelled
	}
	return ""
}

// Exceptions counts the plan's tasks an operator cancelled or skipped.
func (v PlanView) Exceptions() int {
	return v.Progress.Counts[task.Cancelled] + v.Progress.Counts[task.Skipped]
}
