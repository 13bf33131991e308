package plan

// Status is a plan's state.
type Status string

// Plan statuses.
const (
	Scheduled Status = "SCHEDULED"
	Pending   Status = "PENDING"
	Running   Status = "RUNNING"
	Paused    Status = "PAUSED"
	Completed Status = "COMPLETED"
	Failed    Status = "FAILED"
	Cancelled Status = "CANCELLED"
)

// Statuses lists every status.
var Statuses = []Status{Scheduled, Pending, Running, Paused, Completed, Failed, Cancelled}

// Terminal reports whether the plan has ended.
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
