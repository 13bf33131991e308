package redisrepo

import (
	"sort"
	"sync"
)

// journal names what was written to the mirror alone while Redis was away. It keeps ids, not
// changes: the mirror holds each aggregate's latest full state, which is what is written back,
// so a Redis that came back empty is repopulated, not patched with deltas.
type journal struct {
	mu    sync.Mutex
	plans map[string]bool
	tasks map[string]bool
}

func newJournal() *journal {
	return &journal{plans: map[string]bool{}, tasks: map[string]bool{}}
}

// len is the number of aggregates waiting to be written back.
func (j *journal) len() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.plans) + len(j.tasks)
}

// take empties the journal and returns what it held, tasks in creation order (ULIDs sort by
// time), so that a tenant's newest task is written back last.
func (j *journal) take() (plans, tasks []string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for id := range j.plans {
		plans = append(plans, id)
	}
	for id := range j.tasks {
		tasks = append(tasks, id)
	}
	j.plans, j.tasks = map[string]bool{}, map[string]bool{}
	sort.Strings(plans)
	sort.Strings(tasks)
	return plans, tasks
}

// putBack returns ids whose write-back failed to the journal.
func (j *journal) putBack(plans, tasks []string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, id := range plans {
		j.plans[id] = true
	}
	for _, id := range tasks {
		j.tasks[id] = true
	}
}

func sortStrings(s []string) []string {
	sort.Strings(s)
	return s
}
