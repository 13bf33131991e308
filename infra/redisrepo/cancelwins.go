package redisrepo

import (
	"context"
	"errors"
	"time"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/task"
)

// errEnded: the task Redis holds has ended; a cancel has nothing left to stop.
var errEnded = errors.New("redisrepo: the task has ended")

// cancelWins applies, after a write-back conflict, the cancel of mine (this executor's copy,
// CANCELLED while Redis was away: an operator's cancel it acknowledged, or its plan's) to the
// task as Redis holds it, by a compare-and-set, unless that has ended: an acknowledged cancel
// is never lost to another writer's change meanwhile (a reaper that found the run's owner
// gone, a pause request). Stopping is always safe: nothing runs twice for it.
func (wb *writeBack) cancelWins(ctx context.Context, mine *task.Task) {
	if mine.Status() != task.Cancelled {
		return
	}
	r := &TaskRepo{s: wb.s}
	t, err := r.updateOnline(ctx, mine.ID(), func(t *task.Task) (*checkpoint.Checkpoint, error) {
		if t.Status().Terminal() {
			return nil, errEnded
		}
		return nil, t.Cancel(mine.LastError(), time.Now())
	})
	switch {
	case err == nil:
		wb.s.log.Warn("write-back conflict: the cancel this executor acknowledged while Redis was away is applied to the task Redis holds",
			"task_id", t.ID(), "tenant_id", t.TenantID(), "plan_id", t.PlanID(), "version", t.Version())
	case errors.Is(err, errEnded):
		wb.s.log.Warn("write-back conflict: the cancel this executor acknowledged while Redis was away came too late: the task had ended on another executor",
			"task_id", mine.ID(), "tenant_id", mine.TenantID(), "plan_id", mine.PlanID())
	default:
		wb.s.log.Error("write-back conflict: the cancel this executor acknowledged while Redis was away could not be applied",
			"task_id", mine.ID(), "err", err)
	}
}
