package orchestrator

import (
	"errors"
	"time"

	"github.com/executor-dev/executor/domain/task"
)

// OutcomeOK is the outcome Metrics.StageDone reports for a stage attempt that succeeded; a
// failed attempt reports its failure class (stage.Class: retryable, permanent, timeout,
// cancelled, shutdown, lease_lost, fenced).
const OutcomeOK = "ok"

// Metrics is told what the runs do, for the executor's metrics (docs/metrics.md). Its methods
// are called on the runs' paths: they must be cheap and safe for concurrent use.
type Metrics interface {
	// StageDone is told of every stage attempt that ran: its stage kind, its outcome (OutcomeOK
	// or the failure class) and how long it took.
	StageDone(kind, outcome string, d time.Duration)
	// StageRetried is told of every failed stage attempt that will be retried.
	StageRetried(kind string)
	// Fenced is told of every write the store refused because a newer run owns the task.
	Fenced()
	// LeaseContended is told of every run that found its tenant's lease held by someone else.
	LeaseContended()
	// LeaseLost is told of every run that lost its tenant's lease while it ran.
	LeaseLost()
	// ScheduledStart is told of every scheduled plan this executor started, with how late it
	// started after its startAt.
	ScheduledStart(late time.Duration)
	// RollbackStarted is told of every rollback of a task that starts: trigger is
	// TriggerOnFailure (the plan's onFailure turned a failed run back) or TriggerOperator.
	RollbackStarted(trigger string)
}

// What starts a rollback, as Metrics.RollbackStarted is told.
const (
	TriggerOnFailure = "on_failure"
	TriggerOperator  = "operator"
)

// noMetrics is the Metrics of an orchestrator nobody measures.
type noMetrics struct{}

func (noMetrics) StageDone(string, string, time.Duration) {}
func (noMetrics) StageRetried(string)                     {}
func (noMetrics) Fenced()                                 {}
func (noMetrics) LeaseContended()                         {}
func (noMetrics) LeaseLost()                              {}
func (noMetrics) ScheduledStart(time.Duration)            {}
func (noMetrics) RollbackStarted(string)                  {}

// observeAttempt reports a stage attempt of kind that has ended (entry has its outcome).
func (o *core) observeAttempt(kind string, entry *task.Attempt) {
	outcome := OutcomeOK
	if entry.Outcome != task.OutcomeSucceeded {
		outcome = string(entry.Class)
	}
	o.cfg.Metrics.StageDone(kind, outcome, entry.EndedAt.Sub(entry.StartedAt))
}

// observeRetry reports a failed attempt of kind (entry) that will be retried.
func (o *core) observeRetry(kind string, entry *task.Attempt) {
	o.observeAttempt(kind, entry)
	o.cfg.Metrics.StageRetried(kind)
}

// countFenced reports err to the metrics when the store refused a write as fenced, and
// returns it.
func (o *core) countFenced(err error) error {
	if errors.Is(err, task.ErrFenced) {
		o.cfg.Metrics.Fenced()
	}
	return err
}
