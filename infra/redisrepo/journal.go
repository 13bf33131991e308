package redisrepo

import (
	"context"
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

// journaled runs offline and journals plans and tasks, as one step against the write-back's
// last pass; done is false when Redis came back meanwhile (nothing was done). What it journals
// is pinned in the mirror first (never evicted) until a write-back wrote it (unpinWritten).
func (wb *writeBack) journaled(offline func() error, plans, tasks []string) (done bool, err error) {
	j := wb.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	if !wb.s.degraded() {
		return false, nil
	}
	pinnedPlans, pinnedTasks := wb.s.mirror.Pin(plans, tasks)
	planBases, taskBases := wb.bases(j.plans, plans, wb.planVersion), wb.bases(j.tasks, tasks, wb.taskVersion)
	if err := offline(); err != nil {
		wb.s.mirror.Unpin(pinnedPlans, pinnedTasks) // nothing journaled: as it was
		return true, err
	}
	for id, base := range planBases {
		j.plans[id] = base
	}
	for id, base := range taskBases {
		j.tasks[id] = base
	}
	return true, nil
}

// bases returns the base of each of ids not journaled yet: the mirror's version before this
// change (0 when the mirror does not hold it: it is being created now, and a creation that
// reached Redis in spite of a lost reply holds version 0), and the token of its write in
// doubt.
func (wb *writeBack) bases(journaled map[string]base, ids []string, version func(id string) int64) map[string]base {
	out := make(map[string]base, len(ids))
	for _, id := range ids {
		if _, ok := journaled[id]; !ok {
			b := base{version: version(id)}
			if tok, ok := wb.doubts.LoadAndDelete(id); ok {
				b.doubts = []string{tok.(string)}
			}
			out[id] = b
		}
	}
	return out
}

// inDoubt records that a write of aggregate id carrying token failed without a reply: it may
// have reached Redis (see base).
func (wb *writeBack) inDoubt(id, token string) { wb.doubts.Store(id, token) }

// planVersion is the mirror's version of plan id, or 0.
func (wb *writeBack) planVersion(id string) int64 {
	p, err := wb.s.mirror.Plans().Plan(context.Background(), id)
	if err != nil {
		return 0
	}
	return int64(p.Version())
}

// taskVersion is the mirror's version of task id, or 0.
func (wb *writeBack) taskVersion(id string) int64 {
	t, err := wb.s.mirror.Tasks().Task(context.Background(), id)
	if err != nil {
		return 0
	}
	return int64(t.Version())
}

// unpinWritten lets the mirror evict the plans and tasks a write-back wrote to Redis, except
// those journaled again meanwhile (their latest change is not written yet). The caller holds
// the journal's lock.
func (wb *writeBack) unpinWritten(plans, tasks map[string]base) {
	wb.s.mirror.Unpin(notJournaled(plans, wb.journal.plans), notJournaled(tasks, wb.journal.tasks))
}

// notJournaled returns the ids of written that journaled does not hold.
func notJournaled(written, journaled map[string]base) []string {
	out := make([]string, 0, len(written))
	for id := range written {
		if _, ok := journaled[id]; !ok {
			out = append(out, id)
		}
	}
	return out
}

// journalLen returns how many aggregates wait to be written back to Redis.
func (wb *writeBack) journalLen() int { return wb.journal.len() }
