package app

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// TaskQuery selects a page of a plan's tasks.
type TaskQuery struct {
	// Filter keeps the tasks matching it (Statuses named "status" in errors).
	Filter TaskFilter
	// Sort is the order of the listing: SortOrder (default), SortOrderDesc, SortTenant,
	// SortTenantDesc.
	Sort string
	// Cursor, when set, is the NextCursor of a previous page: the page starts after it.
	Cursor string
	// Offset skips that many matching tasks first (after Cursor when both are set).
	Offset int
	// Limit bounds the page; 0 or more than MaxListLimit: MaxListLimit.
	Limit int
}

// The orders of a plan's task listing: each is fixed for the plan's life (a task's position
// and tenant never change), so a cursor is a position in it.
const (
	SortOrder      = "order"   // the plan's task order (the submission's order of tenants)
	SortOrderDesc  = "-order"  // the plan's task order, last first
	SortTenant     = "tenant"  // tenant id ascending
	SortTenantDesc = "-tenant" // tenant id descending
)

// TaskPage is a page of a plan's tasks, in the order asked for, with the plan's tasks the
// store no longer holds (every one of them, whatever the page and the filter).
type TaskPage struct {
	Tasks   []TaskView
	Missing []MissingTask
	// Total counts the plan's tasks that match the filter (over every page) when the page
	// was read; tasks the store no longer holds are not counted.
	Total int
	// NextCursor is the Cursor of the next page; empty when no task after this page matched
	// the filter when it was read.
	NextCursor string
}

// cursorVersion prefixes every cursor, so that a later form (another order) is told apart.
const cursorVersion = "t2"

// PlanTasks returns a page of a plan's tasks matching q's filter, in q's order. The filter is
// applied to the plan's index (task.Row, kept with every task write), so a page reads the
// index and the page's tasks, not the plan's every task. A cursor is a position in the order:
// a page starts at the position after the last task the previous page looked at, so a task is
// listed at most once however statuses change between pages, and without a filter every task
// the store holds exactly once. The filter is applied to the tasks as they are when each page
// is read: a task that starts matching behind the cursor is not listed. A page may hold fewer
// than Limit tasks while NextCursor is set (a task stopped matching while the page was read).
// Tasks the store no longer holds are left out of the tasks and listed in Missing.
func (s *Service) PlanTasks(ctx context.Context, planID string, q TaskQuery) (TaskPage, error) {
	if err := q.Filter.checkStatuses("status", nil); err != nil {
		return TaskPage{}, err
	}
	if q.Offset < 0 {
		return TaskPage{}, invalid("offset", "must not be negative")
	}
	if q.Limit <= 0 || q.Limit > MaxListLimit {
		q.Limit = MaxListLimit
	}
	if q.Sort == "" {
		q.Sort = SortOrder
	}
	if !slices.Contains([]string{SortOrder, SortOrderDesc, SortTenant, SortTenantDesc}, q.Sort) {
		return TaskPage{}, invalid("sort", fmt.Sprintf("%q is not one of order, -order, tenant, -tenant", q.Sort))
	}
	if err := checkULID("planId", planID); err != nil {
		return TaskPage{}, err
	}
	if err := s.refuseRead(); err != nil {
		return TaskPage{}, err
	}
	p, err := s.plans.Plan(ctx, planID)
	if err != nil {
		return TaskPage{}, err
	}
	rf, err := q.Filter.resolve(p)
	if err != nil {
		return TaskPage{}, err
	}
	rows, missing, p, err := s.rowsOf(ctx, p)
	if err != nil {
		return TaskPage{}, err
	}
	order := orderOf(p.TaskIDs(), rows, q.Sort)
	start, err := cursorPosition(q.Cursor, q.Sort, order)
	if err != nil {
		return TaskPage{}, err
	}
	match := func(i int) bool {
		r, ok := rows[order[i]]
		return ok && rf.match(r)
	}
	page := TaskPage{Missing: missing}
	for i := range order {
		if match(i) {
			page.Total++
		}
	}
	next, err := s.fillPage(ctx, p, &page, rows, order, match, rf, start, q)
	if err != nil {
		return TaskPage{}, err
	}
	sortMissing(page.Missing)
	for i := next; i < len(order); i++ {
		if match(i) {
			page.NextCursor = encodeCursor(q.Sort, next, order[next-1])
			break
		}
	}
	return page, nil
}

// fillPage reads the tasks of a page: those matching (by their rows) from position start of
// order on, after q.Offset of them, up to q.Limit, each kept if it still matches rf as read.
// A task found gone (lost while its row stayed: evicted, deleted) is listed missing, dropped
// from the index for every later reader, and the page goes on past it. It returns the position
// after the last task the page looked at.
func (s *Service) fillPage(ctx context.Context, p *plan.Plan, page *TaskPage, rows map[string]task.Row,
	order []string, match func(int) bool, rf rowFilter, start int, q TaskQuery,
) (int, error) {
	next, skip := start, q.Offset
	for len(page.Tasks) < q.Limit && next < len(order) {
		var picked []string
		for ; next < len(order) && len(page.Tasks)+len(picked) < q.Limit; next++ {
			switch {
			case !match(next):
			case skip > 0:
				skip--
			default:
				picked = append(picked, order[next])
			}
		}
		tasks, gone, _, err := s.tasksOf(ctx, picked)
		if err != nil {
			return 0, fmt.Errorf("app: tasks of plan %s: %w", p.ID(), err)
		}
		for _, t := range tasks {
			if rf.match(task.RowOf(t)) {
				page.Tasks = append(page.Tasks, TaskView{Task: t})
			}
		}
		if len(gone) == 0 {
			break
		}
		ids := make([]string, len(gone))
		for i, m := range gone {
			ids[i] = m.TaskID
			delete(rows, m.TaskID)
			page.Missing = append(page.Missing, MissingTask{TaskID: m.TaskID, Index: positionOf(p.TaskIDs(), m.TaskID)})
		}
		page.Total -= len(ids)
		if err := s.index.ForgetRows(ctx, p.ID(), ids); err != nil {
			return 0, fmt.Errorf("app: index of plan %s: %w", p.ID(), err)
		}
	}
	return next, nil
}

// orderOf returns the task ids of a plan in the listing's order: ids (the plan's order) as
// they are or reversed, or sorted by tenant (rows name each present task's tenant; a task
// without a row, which is missing, sorts by its id before the others, the order staying
// fixed).
func orderOf(ids []string, rows map[string]task.Row, sort string) []string {
	switch sort {
	case SortOrder:
		return ids
	case SortOrderDesc:
		out := slices.Clone(ids)
		slices.Reverse(out)
		return out
	}
	out := slices.Clone(ids)
	slices.SortStableFunc(out, func(a, b string) int { return strings.Compare(rows[a].TenantID, rows[b].TenantID) })
	if sort == SortTenantDesc {
		slices.Reverse(out)
	}
	return out
}

// encodeCursor is the opaque cursor of the page that starts at position next of a plan's
// tasks in the order sort, whose previous task is prev (checked when the cursor comes back,
// so that a cursor of another plan or another order is refused).
func encodeCursor(sort string, next int, prev string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorVersion + "." + sort + "." + strconv.Itoa(next) + "." + prev))
}

// cursorPosition returns the position in order (sorted by sort) where the page after cursor
// starts (0 without a cursor), or a validation error naming cursor.
func cursorPosition(cursor, sort string, order []string) (int, error) {
	if cursor == "" {
		return 0, nil
	}
	bad := invalid("cursor", "is not a nextCursor of this plan's task listing in this sort")
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return 0, bad
	}
	parts := strings.Split(string(raw), ".")
	if len(parts) != 4 || parts[0] != cursorVersion || parts[1] != sort {
		return 0, bad
	}
	next, err := strconv.Atoi(parts[2])
	if err != nil || next < 1 || next > len(order) || order[next-1] != parts[3] {
		return 0, bad
	}
	return next, nil
}
