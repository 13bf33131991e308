package cli

import (
	"fmt"
	"io"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/wire"
)

// onFailureText says what a plan's onFailure does, for the values that do something.
var onFailureText = map[string]string{
	"rollback": "rollback (a task that fails undoes the stages it completed, newest first)",
	"pause":    "pause (a task that fails pauses the plan)",
}

// rollbackStage is the STAGE cell of a task rolling back: the undo it runs next, with the
// stages still applied, e.g. "undo:push (2/4)", or "undone (0/4)" once none is.
func rollbackStage(t wire.Task) string {
	n := len(t.Stages)
	k := min(t.CurrentStage, n)
	if k <= 0 {
		return fmt.Sprintf("undone (0/%d)", n)
	}
	return fmt.Sprintf("%s%s (%d/%d)", stage.UndoPrefix, t.Stages[k-1].Name, k, n)
}

// attemptStage names the stage of an attempt: the stage's name, or "undo:<stage>" for an
// attempt of its undo (a rollback's).
func attemptStage(at wire.Attempt) string {
	if at.Undo {
		return stage.UndoPrefix + at.Stage
	}
	return at.Stage
}

// taskRollbackLines follows the row of a task rolling back (or rolled back, or asked to while
// it runs forward) with how far its rollback is and the command that goes on from there.
// Nothing for a task that is not.
func taskRollbackLines(w io.Writer, t wire.Task) {
	if t.RollbackRequested {
		fmt.Fprintf(w, "rollback requested: its run turns back at its next stage boundary, or as its stage ends (%d stage(s) completed so far)\n",
			min(t.CurrentStage, len(t.Stages)))
		return
	}
	if !t.RollingBack {
		return
	}
	applied := fmt.Sprintf("%d of %d stage(s) still applied", min(t.CurrentStage, len(t.Stages)), len(t.Stages))
	switch st := task.Status(t.Status); st {
	case task.RolledBack:
		fmt.Fprintf(w, "rolled back: every stage it completed is undone (or, without an undo, passed over); 'executor retry --tenant %s' runs it forward again\n", t.TenantID)
	case task.RollbackFailed:
		failed := rollbackStage(t)
		if t.LastError != nil && t.LastError.Stage != "" {
			failed = t.LastError.Stage
		}
		fmt.Fprintln(w, cell(fmt.Sprintf("rolling back stopped: %s failed, %s; 'executor rollback --tenant %s' tries it again and goes on",
			failed, applied, t.TenantID)))
	case task.Paused:
		fmt.Fprintf(w, "rolling back, PAUSED: %s; 'executor resume --tenant %s' goes on\n", applied, t.TenantID)
	case task.Cancelled, task.Interrupted:
		fmt.Fprintf(w, "rolling back, %s: %s; 'executor rollback --tenant %s' goes on\n", st, applied, t.TenantID)
	default:
		fmt.Fprintf(w, "rolling back: %s, undone newest first\n", applied)
	}
}
