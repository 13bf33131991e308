// Package orchestrator runs plans: it starts each plan's tasks in submission order, at most
// MaxConcurrency of one plan and Workers of all plans at once, and runs each task's stages in
// order under its tenant lease, saving a checkpoint after every completed stage.
//
// Every change to a task, by its runner or by an operator, is made under that task's lock and
// written through the task repository, so a task has one writer at a time in this process; the
// fence epoch taken with the lease keeps other processes' stale runners out. Plan-level changes
// (pause, resume, cancel, finishing, reopening on retry) are made under the plan's lock.
//
// Lock order: plan lock → task lock → core.mu (this executor's runs, the watchers, the plans
// it runs tasks of), and, apart, the feeder's and the settler's own mutexes.
package orchestrator
