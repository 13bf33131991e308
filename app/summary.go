package app

import (
	"context"
	"fmt"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// PlanIndex is a store's index of each plan's tasks, kept with every write of a task: a
// plan's summary, its rows for filtering, its RUNNING tasks, without reading its every task.
type PlanIndex interface {
	// Summary returns the summary of the plan's indexed tasks (empty when none is indexed).
	Summary(ctx context.Context, planID string) (task.Summary, error)
	// Rows returns the rows of the plan's indexed tasks by task id.
	Rows(ctx context.Context, planID string) (map[string]task.Row, error)
	// Running returns the ids of the plan's tasks the index holds RUNNING.
	Running(ctx context.Context, planID string) ([]string, error)
	// Reindex records the rows of tasks as read from the store (a later row stands).
	Reindex(ctx context.Context, tasks []*task.Task) error
	// ForgetRows drops the rows of ids, tasks of the plan the store no longer holds.
	ForgetRows(ctx context.Context, planID string, ids []string) error
}

// PlanSummary is a plan with the summary of its tasks as they stand.
type PlanSummary struct {
	Plan    *plan.Plan
	Summary task.Summary
	// Missing counts the plan's tasks the store no longer holds (not in the summary).
	Missing int
}

// Summary returns a plan with the summary of its tasks: counts by status, by current stage
// and status, by failure class with a sample, and the slowest RUNNING tasks. It reads the
// plan's index and its RUNNING tasks (to judge those whose owner is gone), not its every
// task.
func (s *Service) Summary(ctx context.Context, planID string) (PlanSummary, error) {
	if err := checkULID("planId", planID); err != nil {
		return PlanSummary{}, err
	}
	if err := s.refuseRead(); err != nil {
		return PlanSummary{}, err
	}
	p, err := s.plans.Plan(ctx, planID)
	if err != nil {
		return PlanSummary{}, err
	}
	sum, p, err := s.summaryOf(ctx, p)
	if err != nil {
		return PlanSummary{}, err
	}
	return PlanSummary{Plan: p, Summary: sum, Missing: max(len(p.TaskIDs())-sum.Total, 0)}, nil
}

// summaryOf returns the summary of p's tasks from the index, and p (read again when judging
// its RUNNING tasks settled it). The index is made whole first when it is not: a plan created
// before there was one, or whose index writes were lost (Redis lost data): one read of the
// plan's tasks repairs it. The tasks the index holds RUNNING are read (and reaped when their
// owner is gone), and their rows brought up to date when the index is behind them.
func (s *Service) summaryOf(ctx context.Context, p *plan.Plan) (task.Summary, *plan.Plan, error) {
	sum, err := s.index.Summary(ctx, p.ID())
	if err != nil {
		return task.Summary{}, nil, fmt.Errorf("app: summary of plan %s: %w", p.ID(), err)
	}
	if sum.Total < len(p.TaskIDs()) {
		if sum, err = s.reindex(ctx, p); err != nil {
			return task.Summary{}, nil, err
		}
	}
	if sum.Statuses[task.Running] == 0 {
		return sum, p, nil
	}
	running, err := s.index.Running(ctx, p.ID())
	if err != nil {
		return task.Summary{}, nil, fmt.Errorf("app: running tasks of plan %s: %w", p.ID(), err)
	}
	rr, err := s.refreshRunning(ctx, p, running)
	if err != nil {
		return task.Summary{}, nil, err
	}
	if !rr.reindexed {
		return sum, rr.plan, nil
	}
	if sum, err = s.index.Summary(ctx, p.ID()); err != nil {
		return task.Summary{}, nil, fmt.Errorf("app: summary of plan %s: %w", p.ID(), err)
	}
	return sum, rr.plan, nil
}

// reindex reads p's every task and records their rows in the index.
func (s *Service) reindex(ctx context.Context, p *plan.Plan) (task.Summary, error) {
	tasks, _, err := readPresent(ctx, p.TaskIDs(), s.tasks.ByIDs)
	if err != nil {
		return task.Summary{}, fmt.Errorf("app: tasks of plan %s: %w", p.ID(), err)
	}
	present := tasks[:0:0]
	for _, t := range tasks {
		if t != nil {
			present = append(present, t)
		}
	}
	if err := s.index.Reindex(ctx, present); err != nil {
		return task.Summary{}, fmt.Errorf("app: index of plan %s: %w", p.ID(), err)
	}
	sum, err := s.index.Summary(ctx, p.ID())
	if err != nil {
		return task.Summary{}, fmt.Errorf("app: summary of plan %s: %w", p.ID(), err)
	}
	return sum, nil
}
