package repotest

import (
	"fmt"
	"time"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// NoopStages returns a stage template of n noop stages named s1 … sn, as executor bench's
// plans have (tests and benchmarks of stored sizes use it).
func NoopStages(n int) []stage.Spec {
	specs := make([]stage.Spec, n)
	for i := range specs {
		specs[i] = stage.Spec{Name: fmt.Sprintf("s%d", i+1), Kind: "noop"}
	}
	return specs
}

// CompleteStage does to tk and cp what a run does when tk's stage i succeeded: it records the
// attempt (started at at, 137 µs long), completes the stage and, when cp is not nil, records
// the stage in cp without output.
func CompleteStage(tk *task.Task, cp *checkpoint.Checkpoint, i int, at time.Time) error {
	name := tk.Stages()[i].Name
	end := at.Add(137 * time.Microsecond)
	if err := tk.Record(task.Attempt{StageIndex: i, Stage: name, Run: tk.Attempt(), Attempt: 1,
		StartedAt: at, EndedAt: end, Outcome: task.OutcomeSucceeded}); err != nil {
		return err
	}
	if err := tk.CompleteStage(i, end); err != nil {
		return err
	}
	if cp == nil {
		return nil
	}
	return cp.Record(i, name, nil, tk.Fence(), end)
}
