// Package due keeps ids by the time they fall due, earliest first: the in-memory scheduler's
// plans by their start (infra/schedule), the embedded store's ended plans by the end of
// their retention (infra/memrepo). Setting, removing and taking the earliest due id are each
// O(log n), and nothing but the earliest is read to find what is due.
package due

import (
	"container/heap"
	"time"
)

// Queue is a set of ids, each with the time it falls due. The zero value is empty and ready.
// Not safe for concurrent use: its owner's lock guards it.
type Queue struct {
	byID  map[string]*entry
	order entries
}

// entry is one id's place in a Queue.
type entry struct {
	id    string
	at    time.Time
	index int // position in order, kept by entries
}

// Set makes id fall due at at, replacing the time it had. It reports whether id is now the
// earliest.
func (q *Queue) Set(id string, at time.Time) bool {
	if q.byID == nil {
		q.byID = map[string]*entry{}
	}
	e, ok := q.byID[id]
	if ok {
		e.at = at
		heap.Fix(&q.order, e.index)
	} else {
		e = &entry{id: id, at: at}
		q.byID[id] = e
		heap.Push(&q.order, e)
	}
	return q.order[0] == e
}

// Remove takes id out; it reports whether it was there.
func (q *Queue) Remove(id string) bool {
	e, ok := q.byID[id]
	if !ok {
		return false
	}
	heap.Remove(&q.order, e.index)
	delete(q.byID, id)
	return true
}

// Pop takes out and returns the earliest id when it is due by now.
func (q *Queue) Pop(now time.Time) (string, bool) {
	if len(q.order) == 0 || q.order[0].at.After(now) {
		return "", false
	}
	e := heap.Pop(&q.order).(*entry)
	delete(q.byID, e.id)
	return e.id, true
}

// Next returns when the earliest id falls due; false when the queue is empty.
func (q *Queue) Next() (time.Time, bool) {
	if len(q.order) == 0 {
		return time.Time{}, false
	}
	return q.order[0].at, true
}

// Has reports whether id is in the queue.
func (q *Queue) Has(id string) bool {
	_, ok := q.byID[id]
	return ok
}

// Len returns how many ids the queue holds.
func (q *Queue) Len() int { return len(q.order) }

// entries is a min-heap of entries by time (container/heap), ties by id.
type entries []*entry

var _ heap.Interface = (*entries)(nil)

func (h entries) Len() int { return len(h) }

func (h entries) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].id < h[j].id
}

func (h entries) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

func (h *entries) Push(x any) {
	e := x.(*entry)
	e.index = len(*h)
	*h = append(*h, e)
}

func (h *entries) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	e.index = -1
	return e
}
