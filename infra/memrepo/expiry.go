package memrepo

import (
	"container/heap"
	"time"
)

// expiry is the embedded store's index of its ended plans by the time their retention runs
// out (NewStore): a min-heap on that time, with each plan's entry by id, so that a plan's
// later end moves its entry, its return to activity takes it out, and the sweep finds what is
// due without reading any other plan, each in O(log n). Not safe for concurrent use: the DB's
// write lock guards it.
type expiry struct {
	ttl  time.Duration // the retention
	byID map[string]*ending
	heap endingHeap
}

// ending is one ended plan's entry in an expiry.
type ending struct {
	id    string
	at    time.Time // when the plan is forgotten: its end's write, plus the retention
	index int       // position in the heap, kept by endingHeap
}

func newExpiry(ttl time.Duration) *expiry {
	return &expiry{ttl: ttl, byID: map[string]*ending{}}
}

// ended gives plan id, written ended at now, the retention from now, replacing the one an
// earlier write gave it (as each write of an ended plan to Redis sets its TTL again).
func (e *expiry) ended(id string, now time.Time) {
	at := now.Add(e.ttl)
	if en, ok := e.byID[id]; ok {
		en.at = at
		heap.Fix(&e.heap, en.index)
		return
	}
	en := &ending{id: id, at: at}
	e.byID[id] = en
	heap.Push(&e.heap, en)
}

// active takes the retention away from plan id: it is active (again), or no longer stored.
func (e *expiry) active(id string) {
	en, ok := e.byID[id]
	if !ok {
		return
	}
	heap.Remove(&e.heap, en.index)
	delete(e.byID, id)
}

// due takes out and returns the plan whose retention ran out first, if one ran out by now.
func (e *expiry) due(now time.Time) (string, bool) {
	if len(e.heap) == 0 || e.heap[0].at.After(now) {
		return "", false
	}
	en := heap.Pop(&e.heap).(*ending)
	delete(e.byID, en.id)
	return en.id, true
}

// endingHeap is a min-heap of endings by time (container/heap), ties by plan id.
type endingHeap []*ending

var _ heap.Interface = (*endingHeap)(nil)

func (h endingHeap) Len() int { return len(h) }

func (h endingHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].id < h[j].id
}

func (h endingHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

func (h *endingHeap) Push(x any) {
	en := x.(*ending)
	en.index = len(*h)
	*h = append(*h, en)
}

func (h *endingHeap) Pop() any {
	old := *h
	en := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	en.index = -1
	return en
}
