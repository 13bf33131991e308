package schedule

import (
	"container/heap"
	"time"
)

// memEntry is one entry of a Memory scheduler's heap.
type memEntry struct {
	id    string
	at    time.Time
	index int // position in the heap, kept by entryHeap
}

// entryHeap is a min-heap of entries by time (container/heap), ties by plan id.
type entryHeap []*memEntry

var _ heap.Interface = (*entryHeap)(nil)

func (h entryHeap) Len() int { return len(h) }

func (h entryHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].id < h[j].id
}

func (h entryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

func (h *entryHeap) Push(x any) {
	e := x.(*memEntry)
	e.index = len(*h)
	*h = append(*h, e)
}

func (h *entryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	e.index = -1
	return e
}
