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
)

// Statuses lists every status in display order.
var Statuses = []Status{Pending, Running, Waiting, Paused, Completed, Failed, Cancelled, Interrupted}

// Terminal reports whether no run of the task is under way or owed: a tenant whose latest task
// is terminal may be rolled out again by a new plan.
func (s Status) Terminal() bool { return s == Completed || s == Failed || s == Cancelled }

// Valid reports whether s is one of Statuses.
func (s Status) Valid() bool {
	for _, v := range Statuses {
		if v == s {
			return true
		}
	}
	return false
}
