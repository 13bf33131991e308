package redisrepo

import (
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// StatusCounts counts the plans and tasks of the store's in-memory mirror by status (see
// memrepo.DB.StatusCounts): what this executor holds (the plans and tasks it accepted or runs
// that have not ended, what it journaled, and a cache of at most Options.CacheTasks others),
// not every plan and task in Redis. It sends nothing to Redis.
func (s *Store) StatusCounts() (plans map[plan.Status]int, tasks map[task.Status]int) {
	return s.mirror.StatusCounts()
}
