package task

// Status is a task's state.
type Status string

// Task statuses.
const (
	Pending Status = "PENDING"
	Running Status = "RUNNING"
	Paused  Status = "PAUSED"
	// Waiting: a gate stage (an approval) waits for an operator's decision; the task holds
	// neither a worker nor its tenant's lease meanwhile (see Task.Wait).
	Waiting     Status = "WAITING"
	Completed   Status = "COMPLETED"
	Failed      Status = "FAILED"
	Cancelled   Status = "CANCELLED"
	Interrupted Status = "INTERRUPTED"
	// RolledBack: a rollback undid every stage the task had completed (Task.RolledBack).
	RolledBack Status = "ROLLED_BACK"
	// RollbackFailed: a rollback stopped at an undo that failed; the stages above it are
	// undone, the others still applied (its last error names the undo).
	RollbackFailed Status = "ROLLBACK_FAILED"
	// Skipped: an operator skipped the tenant (Task.Skip): it was not deployed, by decision. No
	// failure: its plan completes without it, "with exceptions".
	Skipped Status = "SKIPPED"
)

// Statuses lists every status in display order.
var Statuses = []Status{Pending, Running, Waiting, Paused, Completed, Failed, Cancelled, Interrupted, RolledBack, RollbackFailed, Skipped}

// rules is what each status means to the rest of the executor: every status of Statuses has
// an entry (a test fails when a status is added without one), and the methods below read
// nothing else.
var rules = map[Status]struct {
	terminal    bool // ended for good (Terminal)
	settled     bool // over as far as its plan is concerned (Settled)
	atRest      bool // stays so until an operator acts (AtRest)
	retryable   bool // a retry may start it again (Retryable)
	cancellable bool // an operator may cancel it (Cancellable)
	undoable    bool // a rollback may start from it (Undoable)
	failed      bool // it did not deploy the tenant: a failure budget counts it (Failure)
	skippable   bool // an operator may skip it (Skippable)
}{
	Pending:        {cancellable: true, skippable: true},
	Running:        {cancellable: true, undoable: true},
	Waiting:        {atRest: true, cancellable: true, skippable: true},
	Paused:         {atRest: true, retryable: true, cancellable: true, undoable: true, skippable: true},
	Completed:      {terminal: true, settled: true, atRest: true, undoable: true},
	Failed:         {terminal: true, settled: true, atRest: true, retryable: true, undoable: true, failed: true, skippable: true},
	Cancelled:      {terminal: true, settled: true, atRest: true, retryable: true, undoable: true, skippable: true},
	Interrupted:    {settled: true, atRest: true, retryable: true, cancellable: true, undoable: true, skippable: true},
	RolledBack:     {terminal: true, settled: true, atRest: true, retryable: true, failed: true},
	RollbackFailed: {terminal: true, settled: true, atRest: true, retryable: true, undoable: true, failed: true},
	Skipped:        {terminal: true, settled: true, atRest: true, retryable: true, undoable: true},
}

// Terminal reports whether no run of the task is under way or owed: a tenant whose latest task
// is terminal may be rolled out again by a new plan.
func (s Status) Terminal() bool { return rules[s].terminal }

// Settled reports whether the task no longer holds its plan open: it is terminal, or
// INTERRUPTED (its run is over; it waits for an operator's retry or cancel, and its plan
// ends FAILED meanwhile).
func (s Status) Settled() bool { return rules[s].settled }

// AtRest reports whether the task stays in s until an operator acts: it ended, waits at a
// gate (WAITING), or is PAUSED or INTERRUPTED. A long poll on a task answers once it is at
// rest.
func (s Status) AtRest() bool { return rules[s].atRest }

// Retryable reports whether a retry may start the task again from s (Task.Retry): FAILED,
// CANCELLED, PAUSED, INTERRUPTED.
func (s Status) Retryable() bool { return rules[s].retryable }

// Cancellable reports whether an operator may cancel the task in s (Task.Cancel): any status
// that is not terminal.
func (s Status) Cancellable() bool { return rules[s].cancellable }

// Undoable reports whether an operator may roll the task back from s (Task.Rollback): it has
// run and stopped (not WAITING at a gate, not ROLLED_BACK already), or it RUNS (its run turns
// back at its next stage boundary).
func (s Status) Undoable() bool { return rules[s].undoable }

// Failure reports whether a task that ended in s did not deploy its tenant: FAILED, and a
// rollback's ends. A ring's failure budget counts these.
func (s Status) Failure() bool { return rules[s].failed }

// Skippable reports whether an operator may skip the task in s (Task.Skip): it does not run
// (not RUNNING) and has not completed nor been rolled back.
func (s Status) Skippable() bool { return rules[s].skippable }

// SkippableStatuses lists the statuses Skippable accepts, in display order.
func SkippableStatuses() []Status { return statusesWhere(Status.Skippable) }

// UndoableStatuses lists the statuses Undoable accepts, in display order.
func UndoableStatuses() []Status { return statusesWhere(Status.Undoable) }

// RetryableStatuses lists the statuses Retryable accepts, in display order.
func RetryableStatuses() []Status { return statusesWhere(Status.Retryable) }

// CancellableStatuses lists the statuses Cancellable accepts, in display order.
func CancellableStatuses() []Status { return statusesWhere(Status.Cancellable) }

// statusesWhere lists the statuses rule accepts, in display order.
func statusesWhere(rule func(Status) bool) []Status {
	var out []Status
	for _, s := range Statuses {
		if rule(s) {
			out = append(out, s)
		}
	}
	return out
}

// Valid reports whether s is one of Statuses.
func (s Status) Valid() bool {
	_, ok := rules[s]
	return ok
}
