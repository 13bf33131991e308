package task

import (
	"time"

	"github.com/executor-dev/executor/domain/stage"
)

// Outcome is how a stage attempt ended.
type Outcome string

// Attempt outcomes.
const (
	OutcomeSucceeded Outcome = "succeeded"
	OutcomeFailed    Outcome = "failed"
	// OutcomeInterrupted: the attempt was cut short before it ended by itself (a cancel, a
	// shutdown, a lost lease or a dead executor; Class says which), or its end was never seen.
	// An entry derived from what was stored, by whoever learned of the interruption, has
	// StartedAt at the earliest the attempt could have started and EndedAt when the writer
	// learned of it (see Task.InterruptStage).
	OutcomeInterrupted Outcome = "interrupted"
	// OutcomeInDoubt: the attempt's call may have reached the target, and no run recorded how
	// it ended: the executor that took over a RUNNING task whose run was gone (Task.Abandon)
	// derived it, as it derives an interrupted one, while the lost run may have been inside
	// the call. The target may have done the work: the next run's call of the stage sends the
	// same Idempotency-Key (Task.InDoubt).
	OutcomeInDoubt Outcome = "in_doubt"
)

// Outcomes lists every attempt outcome.
var Outcomes = []Outcome{OutcomeSucceeded, OutcomeFailed, OutcomeInterrupted, OutcomeInDoubt}

// Valid reports whether o is one of Outcomes.
func (o Outcome) Valid() bool {
	for _, v := range Outcomes {
		if v == o {
			return true
		}
	}
	return false
}

// Attempt is one entry of the attempt ledger: one attempt of one stage.
type Attempt struct {
	StageIndex int
	Stage      string
	Run        int // the task attempt the stage attempt belongs to
	Attempt    int // the stage attempt within the run, from 1
	StartedAt  time.Time
	EndedAt    time.Time
	Outcome    Outcome
	Class      stage.Class   // empty on success
	Error      string        // empty on success
	Code       int           // remote status code, when one applies
	Backoff    time.Duration // the wait chosen before the next attempt; 0 when none follows
	// Undo: an attempt of the stage's undo (a rollback's), not of the stage. A run is either
	// forward or a rollback, so (StageIndex, Run, Attempt) still names one entry.
	Undo bool
}

// Failure is a task's last error, a structured record of what stopped it.
type Failure struct {
	Stage   string
	Attempt int
	Class   stage.Class
	Message string
	Code    int
}
