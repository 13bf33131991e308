package orchestrator

import (
	"errors"

	"github.com/executor-dev/executor/domain/checkpoint"
)

// Defaults of the output bounds (Config.MaxOutputBytes, Config.MaxTaskOutputBytes).
const (
	DefaultMaxOutputBytes     = 256 << 10
	DefaultMaxTaskOutputBytes = 1 << 20
)

// errOutputTooLarge: a stage's output is over its bound; the stage fails permanently.
var errOutputTooLarge = errors.New("stage output too large")

// outputRoom is how large the output of the stage cp resumes at may be: the per-stage bound,
// or what the task's bound leaves after the outputs its checkpoint holds, whichever is less.
// Outputs live in the checkpoint as long as the task: 100,000 tenants' outputs must not hold
// an executor's memory (the memory store) or Redis's.
func (run *taskRun) outputRoom(cp *checkpoint.Checkpoint) int {
	return max(min(run.o.cfg.MaxOutputBytes, run.o.cfg.MaxTaskOutputBytes-cp.OutputBytes()), 1)
}
