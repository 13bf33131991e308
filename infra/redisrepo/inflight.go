package redisrepo

import "sync"

// inflight counts, per plan or task id, this executor's writes of it under way: from before
// the first send until the write is settled, on Redis or in the journal (change). A read
// from Redis meanwhile does not record what it read in the mirror: Redis may hold the write
// already while its sender has not learnt so (its reply is late or lost), and had the read
// recorded it, the write's fallback to the mirror (Redis away) would find its own change
// there and fail as a conflict with itself; the run would then read its own change back,
// apply it a second time and stop ("stage completed out of order"), leaving its task
// RUNNING without a run. What the mirror holds of an aggregate being written is decided by
// the write's outcome alone. Entries live while their writes do: the map holds no more ids
// than writes under way.
type inflight struct {
	mu sync.Mutex
	n  map[string]int
}

func newInflight() *inflight { return &inflight{n: map[string]int{}} }

// begin records writes of plans and tasks under way; the returned func ends them.
func (f *inflight) begin(plans, tasks []string) (end func()) {
	f.mu.Lock()
	for _, id := range plans {
		f.n[id]++
	}
	for _, id := range tasks {
		f.n[id]++
	}
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.drop(plans)
		f.drop(tasks)
	}
}

func (f *inflight) drop(ids []string) {
	for _, id := range ids {
		if f.n[id] <= 1 {
			delete(f.n, id)
		} else {
			f.n[id]--
		}
	}
}

// has reports whether a write of id is under way.
func (f *inflight) has(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n[id] > 0
}
