package orchestrator

import (
	"context"
	"log/slog"
	"time"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// park ends a run at a gate that waits for an operator's decision: the task becomes WAITING
// at that stage (its checkpoint holds every stage before it), and the run gives its worker
// and its tenant's lease back.
func (run *taskRun) park(wait *stage.AwaitError, log *slog.Logger) {
	err := run.commit(nil, func(t *task.Task) error { return t.Await(wait.Reason, wait.Message, run.o.now()) })
	if err != nil {
		log.Error("park task at its gate", "err", err)
		return
	}
	log.Info("task waiting", "reason", wait.Reason)
	if st := run.cur().Wait(); st != nil {
		run.o.noteOnce(run.ctx, run.planID, "gate:"+st.Stage, func(p *plan.Plan, now time.Time) bool {
			return p.NoteOnce(plan.EventGateWaiting, st.Stage, now)
		})
	}
}

// DecideTask records an operator's decision on a WAITING task's gate (approve, or reject) and
// queues the task: its next run starts at the gate, which passes on an approval and fails
// permanently on a rejection.
func (ctl *control) DecideTask(ctx context.Context, taskID string, d stage.Decision) error {
	if d.DecidedAt.IsZero() {
		d.DecidedAt = ctl.now()
	}
	return ctl.requeue(ctx, taskID, func(t *task.Task, _ *checkpoint.Checkpoint) (*checkpoint.Checkpoint, error) {
		return nil, t.Decide(d, ctl.now())
	})
}
