package app

import (
	"context"
	"fmt"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// rowsOf returns the rows of p's tasks as they stand, by task id, from the plan's index, and
// the tasks the store no longer holds (in the plan's order). A task the index lacks (a plan
// indexed before there was an index, an index write lost with Redis's data) is read and
// indexed; one the store lacks too is missing. The RUNNING tasks are read (and reaped when
// their owner is gone, as every query does) and their rows brought up to date. It returns p
// read again when reaping may have settled it.
func (s *Service) rowsOf(ctx context.Context, p *plan.Plan) (map[string]task.Row, []MissingTask, *plan.Plan, error) {
	rows, err := s.index.Rows(ctx, p.ID())
	if err != nil {
		return nil, nil, nil, fmt.Errorf("app: index of plan %s: %w", p.ID(), err)
	}
	ids := p.TaskIDs()
	var absent []string
	at := map[string]int{}
	for i, id := range ids {
		if _, ok := rows[id]; !ok {
			absent, at[id] = append(absent, id), i
		}
	}
	var missing []MissingTask
	if len(absent) > 0 {
		tasks, gone, err := readPresent(ctx, absent, s.tasks.ByIDs)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("app: tasks of plan %s: %w", p.ID(), err)
		}
		for _, m := range gone {
			missing = append(missing, MissingTask{TaskID: m.TaskID, Index: at[m.TaskID]})
		}
		present := tasks[:0:0]
		for _, t := range tasks {
			if t != nil {
				present, rows[t.ID()] = append(present, t), task.RowOf(t)
			}
		}
		if err := s.index.Reindex(ctx, present); err != nil {
			return nil, nil, nil, fmt.Errorf("app: index of plan %s: %w", p.ID(), err)
		}
	}
	var running []string
	for id, r := range rows {
		if r.Status == task.Running {
			running = append(running, id)
		}
	}
	rr, err := s.refreshRunning(ctx, p, running)
	if err != nil {
		return nil, nil, nil, err
	}
	p = rr.plan
	for _, t := range rr.tasks {
		rows[t.ID()] = task.RowOf(t)
	}
	for _, id := range rr.gone { // lost since the index was read
		delete(rows, id)
		missing = append(missing, MissingTask{TaskID: id, Index: positionOf(ids, id)})
	}
	sortMissing(missing)
	return rows, missing, p, nil
}

// runningRead is what refreshRunning read of a plan's RUNNING tasks.
type runningRead struct {
	tasks     []*task.Task // as read (reaped when their owner was gone)
	gone      []string     // ids the store no longer holds
	plan      *plan.Plan   // the plan, read again when a task was reaped
	reindexed bool         // the index was behind and was brought up to date
}

// refreshRunning reads the tasks the index holds RUNNING (running, task ids of p), reaping
// those whose owner is gone, and re-indexes them when the index is behind any.
func (s *Service) refreshRunning(ctx context.Context, p *plan.Plan, running []string) (runningRead, error) {
	rr := runningRead{plan: p}
	if len(running) == 0 {
		return rr, nil
	}
	tasks, lost, reaped, err := s.tasksOf(ctx, running)
	if err != nil {
		return runningRead{}, fmt.Errorf("app: running tasks of plan %s: %w", p.ID(), err)
	}
	rr.tasks = tasks
	for _, m := range lost {
		rr.gone = append(rr.gone, m.TaskID)
	}
	behind := reaped > 0
	for _, t := range tasks {
		behind = behind || t.Status() != task.Running
	}
	if behind {
		if err := s.index.Reindex(ctx, tasks); err != nil {
			return runningRead{}, fmt.Errorf("app: index of plan %s: %w", p.ID(), err)
		}
		rr.reindexed = true
	}
	if reaped > 0 {
		if rr.plan, err = s.plans.Plan(ctx, p.ID()); err != nil { // reaping may have settled it
			return runningRead{}, err
		}
	}
	return rr, nil
}

// positionOf is id's index in ids (-1 when absent).
func positionOf(ids []string, id string) int {
	for i, x := range ids {
		if x == id {
			return i
		}
	}
	return -1
}
