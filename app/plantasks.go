package app

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/executor-dev/executor/domain/task"
)

// TaskQuery selects a page of a plan's tasks.
type TaskQuery struct {
	// Status, when set, keeps only the tasks in that status.
	Status task.Status
	// Cursor, when set, is the NextCursor of a previous page: the page starts after it.
	Cursor string
	// Offset skips that many matching tasks first (after Cursor when both are set).
	Offset int
	// Limit bounds the page; 0 or more than MaxListLimit: MaxListLimit.
	Limit int
}

// TaskPage is a page of a plan's tasks, in the plan's task order, with the plan's tasks the
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
const cursorVersion = "t1"

// PlanTasks returns a page of a plan's tasks in the plan's task order (its taskIds, the
// submission's order of tenants). A cursor is a position in that order: a page starts at the
// position after the last task the previous page looked at, so a task is listed at most once
// however statuses change between pages, and without a filter every task the store holds
// exactly once. The filter is applied to the tasks as they are when each page is read: a task
// that enters the filter's status behind the cursor is not listed. A page may hold fewer than
// Limit tasks while NextCursor is set (a task left the status while the page was read). Tasks
// the store no longer holds are left out of the tasks and listed in Missing.
func (s *Service) PlanTasks(ctx context.Context, planID string, q TaskQuery) (TaskPage, error) {
	if q.Status != "" && !q.Status.Valid() {
		return TaskPage{}, invalid("status", fmt.Sprintf("unknown task status %q", q.Status))
	}
	if q.Offset < 0 {
		return TaskPage{}, invalid("offset", "must not be negative")
	}
	if q.Limit <= 0 || q.Limit > MaxListLimit {
		q.Limit = MaxListLimit
	}
	if err := checkULID("planId", planID); err != nil {
		return TaskPage{}, err
	}
	if err := s.refuseRead(); err != nil {
		return TaskPage{}, err
	}
	p, err := s.Plans.Plan(ctx, planID)
	if err != nil {
		return TaskPage{}, err
	}
	ids := p.TaskIDs()
	start, err := cursorPosition(q.Cursor, ids)
	if err != nil {
		return TaskPage{}, err
	}
	statuses, missing, _, err := s.statusesOf(ctx, p)
	if err != nil {
		return TaskPage{}, err
	}
	match := func(i int) bool { return statuses[i] != "" && (q.Status == "" || statuses[i] == q.Status) }
	page := TaskPage{Missing: missing}
	for i := range ids {
		if match(i) {
			page.Total++
		}
	}
	var picked []string
	at := map[string]int{}
	next, skip := start, q.Offset
	for ; next < len(ids) && len(picked) < q.Limit; next++ {
		switch {
		case !match(next):
		case skip > 0:
			skip--
		default:
			picked, at[ids[next]] = append(picked, ids[next]), next
		}
	}
	for i := next; i < len(ids); i++ {
		if match(i) {
			page.NextCursor = encodeCursor(next, ids[next-1])
			break
		}
	}
	tasks, gone, _, err := s.tasksOf(ctx, picked)
	if err != nil {
		return TaskPage{}, fmt.Errorf("app: tasks of plan %s: %w", planID, err)
	}
	for _, m := range gone { // lost since its status was read
		page.Missing = append(page.Missing, MissingTask{TaskID: m.TaskID, Index: at[m.TaskID]})
	}
	slices.SortFunc(page.Missing, func(a, b MissingTask) int { return a.Index - b.Index })
	for _, t := range tasks {
		if q.Status == "" || t.Status() == q.Status {
			page.Tasks = append(page.Tasks, TaskView{Task: t})
		}
	}
	return page, nil
}

// encodeCursor is the opaque cursor of the page that starts at position next of a plan's
// tasks, whose previous task is prev (checked when the cursor comes back, so that a cursor of
// another plan is refused).
func encodeCursor(next int, prev string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorVersion + "." + strconv.Itoa(next) + "." + prev))
}

// cursorPosition returns the position in ids where the page after cursor starts (0 without
// a cursor), or a validation error naming cursor.
func cursorPosition(cursor string, ids []string) (int, error) {
	if cursor == "" {
		return 0, nil
	}
	bad := invalid("cursor", "is not a nextCursor of this plan's task listing")
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return 0, bad
	}
	parts := strings.Split(string(raw), ".")
	if len(parts) != 3 || parts[0] != cursorVersion {
		return 0, bad
	}
	next, err := strconv.Atoi(parts[1])
	if err != nil || next < 1 || next > len(ids) || ids[next-1] != parts[2] {
		return 0, bad
	}
	return next, nil
}
