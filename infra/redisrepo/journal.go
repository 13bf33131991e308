package redisrepo

import (
	"sort"
	"strings"
	"sync"
)

// unknownBase is the base a creation passes to create_plan.lua: not a write-back, so a plan
// that exists already (a creation retried, or late) is left as it is.
const unknownBase = -1

// base is what a write-back compares Redis with: the version Redis held before this
// executor's first change while it was away, and the tokens of this executor's writes of the
// aggregate whose outcome is unknown since (the write whose lost reply began the outage, and
// write-backs whose pipeline failed): Redis holding one of them holds this executor's own
// write, not another writer's.
type base struct {
	version int64
	doubts  []string
	// lost is, for the write-back after Redis lost its data (journalEverything), the
	// generation of Redis's data since the loss ("" otherwise): the copy is written over
	// nothing, or, newest wins, over an older copy another executor wrote back for the same
	// loss (its hash carries that generation in "restored"); over anything else (Redis kept
	// the aggregate: the loss was another key's) it is the usual compare-and-set on version.
	lost string
}

// doubtList is the script argument naming this executor's own writes: its writer prefix
// followed by "*" (any write of this process), then the doubts, comma-separated.
func (b base) doubtList(writer string) string {
	return strings.Join(append([]string{writer + "*"}, b.doubts...), ",")
}

// journal names what was written to the mirror alone while Redis was away, each with its base
// version: the version Redis held (as far as this executor knows) before this executor's
// first change of it while Redis was away. It keeps ids, not changes: the mirror holds each
// aggregate's latest full state, which is what is written back, as a compare-and-set on the
// base version (another writer's change meanwhile is a conflict, never overwritten), so a
// Redis that came back empty is repopulated, not patched with deltas.
type journal struct {
	mu    sync.Mutex
	plans map[string]base
	tasks map[string]base
}

func newJournal() *journal {
	return &journal{plans: map[string]base{}, tasks: map[string]base{}}
}

// len is the number of aggregates waiting to be written back.
func (j *journal) len() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.plans) + len(j.tasks)
}

// take empties the journal and returns what it held.
func (j *journal) take() (plans, tasks map[string]base) {
	j.mu.Lock()
	defer j.mu.Unlock()
	plans, tasks = j.plans, j.tasks
	j.plans, j.tasks = map[string]base{}, map[string]base{}
	return plans, tasks
}

// putBack returns ids whose write-back failed to the journal. An id journaled again
// meanwhile keeps the older base (Redis may still hold it: the failed write-back may not have
// landed) with the doubts of both.
func (j *journal) putBack(plans, tasks map[string]base) {
	j.mu.Lock()
	defer j.mu.Unlock()
	merge(j.plans, plans)
	merge(j.tasks, tasks)
}

func merge(into, older map[string]base) {
	for id, old := range older {
		if cur, ok := into[id]; ok {
			old.doubts = append(old.doubts, cur.doubts...)
		}
		into[id] = old
	}
}

// sortedIDs returns the ids of m in order: tasks in creation order (ULIDs sort by time), so
// that a tenant's newest task is written back last.
func sortedIDs(m map[string]base) []string {
	out := make([]string, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}
