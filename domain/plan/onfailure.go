package plan

// OnFailure is what a task of a plan that fails sets off, besides the task's own FAILED.
type OnFailure string

// What a failed task sets off.
const (
	// OnFailureNone: nothing; the task stays FAILED until an operator retries or rolls it
	// back (the default).
	OnFailureNone OnFailure = "none"
	// OnFailureRollback: the task's run turns back and undoes the stages it completed,
	// newest first (task.Task.TurnBack): it ends ROLLED_BACK, or ROLLBACK_FAILED.
	OnFailureRollback OnFailure = "rollback"
	// OnFailurePause: the plan pauses (nothing new starts; running tasks pause at their
	// next stage boundary), for an operator to look before the rollout goes on.
	OnFailurePause OnFailure = "pause"
)

// OnFailures lists every OnFailure.
var OnFailures = []OnFailure{OnFailureNone, OnFailureRollback, OnFailurePause}

// Valid reports whether o is one of OnFailures.
func (o OnFailure) Valid() bool {
	for _, v := range OnFailures {
		if v == o {
			return true
		}
	}
	return false
}

// orNone is o, or OnFailureNone when it is empty (a plan stored before onFailure existed).
func (o OnFailure) orNone() OnFailure {
	if o == "" {
		return OnFailureNone
	}
	return o
}
