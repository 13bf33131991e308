package memrepo

import (
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// StatusCounts counts the plans and the tasks the database holds by status, as stored (a
// RUNNING task whose owner died counts as RUNNING until a read reports it INTERRUPTED). Every
// status has an entry, 0 when no plan or task has it. It reads every plan and task once under
// the read lock and allocates only the two maps, for the metrics scrape.
func (db *DB) StatusCounts() (plans map[plan.Status]int, tasks map[task.Status]int) {
	plans = make(map[plan.Status]int, len(plan.Statuses))
	for _, s := range plan.Statuses {
		plans[s] = 0
	}
	tasks = make(map[task.Status]int, len(task.Statuses))
	for _, s := range task.Statuses {
		tasks[s] = 0
	}
	db.mu.RLock()
	defer db.mu.RUnlock()
	for _, p := range db.plans {
		plans[p.Status()]++
	}
	for _, t := range db.tasks {
		tasks[t.Status()]++
	}
	return plans, tasks
}
