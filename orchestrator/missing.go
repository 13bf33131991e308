package orchestrator

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/executor-dev/executor/domain/task"
)

// statusMissing stands, in what statusesOf returns, for a task the store no longer holds:
// Redis lost it (restarted empty) and no executor held a copy to write back.
const statusMissing = task.Status("")

// statusesOf returns the statuses of ids in order, statusMissing for a task the store does not
// hold (as Redis answers: while degraded, memory does not hold every task and ErrNotFound is
// returned), where Statuses fails as a whole. The plan's commands and its settling then act on the
// tasks that are there: a plan with a lost task is not stuck. Only when some task is missing
// does it read them one by one.
func (o *core) statusesOf(ctx context.Context, ids []string) ([]task.Status, error) {
	statuses, err := o.tasks.Statuses(ctx, ids)
	if !errors.Is(err, task.ErrNotFound) || o.degraded() {
		return statuses, err // while degraded, memory does not hold every task: not a loss
	}
	out := make([]task.Status, len(ids))
	for i, id := range ids {
		st, err := o.tasks.Statuses(ctx, []string{id})
		switch {
		case errors.Is(err, task.ErrNotFound) && o.degraded():
			return nil, err
		case errors.Is(err, task.ErrNotFound):
			out[i] = statusMissing
		case err != nil:
			return nil, err
		default:
			out[i] = st[0]
		}
	}
	return out, nil
}

// missingTooSoon reports whether statuses hold a task the store no longer holds while Redis
// lost its data a short while ago (while the store pauses claims after the loss, then
// resettleFor lease TTLs after Restored): the other executors may not have
// written their copies back yet (one that ran the plan's last tasks writes back its plan and
// tasks when it sees the loss, maybe after this executor), and a plan settled FAILED now
// would refuse their write-back and strand the tasks they bring back PENDING. The plan is
// settled again at the following dispatch rounds (markResettle) and, once the grace is over,
// ended with its lost tasks counted as failed.
func (s *settler) missingTooSoon(planID string, statuses []task.Status) bool {
	if !slices.Contains(statuses, statusMissing) {
		return false
	}
	lost := s.lostAt.Load()
	paused := s.claimsPaused() > 0 // the store saw the loss; Restored comes after the pause
	if !paused && (lost == 0 || s.now().Sub(time.Unix(0, lost)) >= resettleFor*s.cfg.LeaseTTL) {
		return false
	}
	s.markResettle(planID)
	return true
}
