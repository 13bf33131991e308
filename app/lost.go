package app

import (
	"context"
	"errors"
	"slices"

	"github.com/executor-dev/executor/domain/task"
)

// MissingTask is a task of a plan that the store no longer holds (Redis lost it while the
// plan survived). Index is its place in the plan's task ids, which is also its tenant's place
// in the submission's tenants: the task's tenant is lost with it.
type MissingTask struct {
	TaskID string
	Index  int
}

// ReasonTaskMissing is why a bulk operation skipped a task the store no longer holds.
const ReasonTaskMissing = "the store no longer holds this task (Redis lost it); see the plan's missingTasks"

// readPresent reads ids with read, which fails with task.ErrNotFound as a whole when one of
// them is missing, and returns what it read of the others (the zero T in a missing one's
// place) and the missing ones. It reads ids at once when none is missing; otherwise it halves
// the range that failed until it has the missing ones alone: a few lost tasks of a large plan
// cost a few reads of halves, not one read per task.
func readPresent[T any](ctx context.Context, ids []string, read func(context.Context, []string) ([]T, error)) ([]T, []MissingTask, error) {
	out := make([]T, len(ids))
	var missing []MissingTask
	var walk func(lo, hi int) error
	walk = func(lo, hi int) error {
		if lo == hi {
			return nil
		}
		vals, err := read(ctx, ids[lo:hi])
		switch {
		case err == nil:
			copy(out[lo:hi], vals)
			return nil
		case !errors.Is(err, task.ErrNotFound):
			return err
		case hi-lo == 1:
			missing = append(missing, MissingTask{TaskID: ids[lo], Index: lo})
			return nil
		}
		mid := lo + (hi-lo)/2
		if err := walk(lo, mid); err != nil {
			return err
		}
		return walk(mid, hi)
	}
	if err := walk(0, len(ids)); err != nil {
		return nil, nil, err
	}
	return out, missing, nil
}

// sortMissing orders missing tasks by their index in the plan.
func sortMissing(missing []MissingTask) {
	slices.SortFunc(missing, func(a, b MissingTask) int { return a.Index - b.Index })
}
