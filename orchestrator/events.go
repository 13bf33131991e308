package orchestrator

import (
	"context"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/event"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// noEvents is the publisher of an orchestrator nobody watches.
type noEvents struct{}

func (noEvents) Publish(event.Event) {}

// saveTask writes t and, when cp is not nil, its checkpoint, then tells the watchers.
func (o *core) saveTask(ctx context.Context, t *task.Task, cp *checkpoint.Checkpoint) error {
	if err := o.tasks.Save(ctx, t, cp); err != nil {
		return err
	}
	o.cfg.Events.Publish(taskEvent(t, cp))
	return nil
}

// taskEvent describes t as just saved: a stage event when the save completed a stage (cp
// moved on), else a task event.
func taskEvent(t *task.Task, cp *checkpoint.Checkpoint) event.Event {
	e := event.Event{
		Kind: event.Task, At: t.UpdatedAt(), PlanID: t.PlanID(), TaskID: t.ID(), TenantID: t.TenantID(),
		Status: string(t.Status()), Stage: t.CurrentStage(), Run: t.Attempt(),
	}
	if n := t.LedgerLen(); n > 0 {
		a := t.LedgerFrom(n - 1)[0]
		e.Last = &event.Attempt{StageIndex: a.StageIndex, Stage: a.Stage, Attempt: a.Attempt, Outcome: string(a.Outcome), Class: string(a.Class)}
		if a.Undo {
			e.Last.Stage = stage.UndoPrefix + a.Stage
		}
	}
	switch {
	case cp == nil || cp.Next() != t.CurrentStage():
	case t.RollingBack() && cp.Next() < len(t.Stages()):
		e.Kind, e.Stage = event.Undo, cp.Next()
		e.StageName = t.Stages()[e.Stage].Name
	case !t.RollingBack() && cp.Next() > 0:
		e.Kind, e.Stage = event.Stage, cp.Next()-1
		e.StageName = t.Stages()[e.Stage].Name
	}
	return e
}
