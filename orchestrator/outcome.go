package orchestrator

import (
	"errors"
	"fmt"
	"time"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// errUnsettledStatus is a status settledOutcome does not know how to end a plan with: a status
// added to task.Statuses as settled without a case below. The plan is left open (settle
// answers the error) rather than completed by default.
var errUnsettledStatus = errors.New("orchestrator: no plan outcome for task status")

// outcome is what a plan's settled tasks add up to (settledOutcome).
type outcome struct {
	failed      bool     // one FAILED, was INTERRUPTED or rolled back, or is missing
	completed   int      // tasks COMPLETED
	exceptions  int      // tasks an operator cancelled or skipped
	interrupted []string // the INTERRUPTED ones
}

// end ends p as its tasks add up to: FAILED when one failed; CANCELLED when none completed,
// or when an operator stopped its rollout (a ring rejected or halted: the tasks it cancelled
// were never let start); COMPLETED otherwise: every tenant done, or done "with exceptions"
// (tenants an operator cancelled or skipped one by one; the plan's progress counts them).
func (o outcome) end(p *plan.Plan, now time.Time) error {
	switch {
	case o.failed:
		return p.Fail(now)
	case o.exceptions > 0 && (o.completed == 0 || p.RolloutStopped()):
		return p.Cancel(now)
	}
	return p.Complete(now)
}

// settledOutcome is what a plan whose tasks (ids) all settled in statuses adds up to. Every
// settled status has its case; any other is an error.
func settledOutcome(statuses []task.Status, ids []string) (outcome, error) {
	var o outcome
	for i, st := range statuses {
		switch st {
		case task.Completed:
			o.completed++
		case task.Interrupted:
			o.failed = true
			o.interrupted = append(o.interrupted, ids[i])
		case task.Failed, statusMissing: // a lost task did not complete
			o.failed = true
		case task.RolledBack, task.RollbackFailed: // its change did not hold (docs/design.md)
			o.failed = true
		case task.Cancelled, task.Skipped:
			o.exceptions++
		default:
			return outcome{}, fmt.Errorf("%w: task %s is %s", errUnsettledStatus, ids[i], st)
		}
	}
	return o, nil
}
