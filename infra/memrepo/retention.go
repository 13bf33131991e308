package memrepo

// retention decides which aggregates of one kind (plans, or tasks) a bounded mirror keeps
// (NewMirror). Every aggregate the mirror stores has a slot, in one of three states:
//
//   - pinned (Pin): not yet written to the durable store; never evicted;
//   - kept: written by this executor (own; a plan also when it writes a task of it that has
//     not ended) and not ended: what it runs or accepted; never evicted;
//   - cached: ended (a task also when its plan ended: a copy that has not is stale), or only
//     read; the least recently recorded go first beyond max (in weight).
//
// Not safe for concurrent use: the DB's write lock guards it.
type retention struct {
	max    int // bound on the cached weight
	slots  map[string]*slot
	pins   map[string]struct{} // may name aggregates not stored (yet)
	kept   slotList            // own slots that have not ended
	cache  slotList            // least recently recorded first
	cached int                 // the weight of cache
}

// slot is one aggregate's place in a retention.
type slot struct {
	id         string
	prev, next *slot
	list       *slotList // kept, cache, or nil while pinned
	own        bool      // this executor wrote it (a creation, a run's write, a change)
	ended      bool      // its status is terminal (a task's: or its plan's)
	weight     int       // what it counts against the bound while cached
}

func newRetention(max int) *retention {
	r := &retention{max: max, slots: map[string]*slot{}, pins: map[string]struct{}{}}
	r.kept.init()
	r.cache.init()
	return r
}

// record notes that aggregate id was stored: by this executor's write (own) or read back
// from the durable store (an aggregate once written by this executor stays its own).
func (r *retention) record(id string, own, ended bool, weight int) {
	s := r.slots[id]
	if s == nil {
		s = &slot{id: id}
		r.slots[id] = s
	}
	s.own = s.own || own
	s.ended = ended
	r.place(s, weight)
}

// adopt makes stored aggregate id this executor's own (kept while it has not ended).
func (r *retention) adopt(id string) {
	if s := r.slots[id]; s != nil && !s.own {
		s.own = true
		r.place(s, s.weight)
	}
}

// setEnded changes whether stored aggregate id counts as ended.
func (r *retention) setEnded(id string, ended bool) {
	if s := r.slots[id]; s != nil && s.ended != ended {
		s.ended = ended
		r.place(s, s.weight)
	}
}

// own reports whether aggregate id is stored and this executor wrote it.
func (r *retention) own(id string) bool {
	s := r.slots[id]
	return s != nil && s.own
}

// pinned reports whether id is pinned.
func (r *retention) pinned(id string) bool {
	_, ok := r.pins[id]
	return ok
}

// ended reports whether stored aggregate id counts as ended.
func (r *retention) ended(id string) bool {
	s := r.slots[id]
	return s != nil && s.ended
}

// place puts s at the back of the list its state calls for, with weight.
func (r *retention) place(s *slot, weight int) {
	if s.list == &r.cache {
		r.cached -= s.weight
	}
	if s.list != nil {
		s.list.remove(s)
	}
	s.weight = weight
	_, pinned := r.pins[s.id]
	switch {
	case pinned:
	case s.own && !s.ended:
		r.kept.pushBack(s)
	default:
		r.cache.pushBack(s)
		r.cached += weight
	}
}

// pin keeps id, stored or about to be, until unpin. It reports whether id was not pinned.
func (r *retention) pin(id string) bool {
	if _, ok := r.pins[id]; ok {
		return false
	}
	r.pins[id] = struct{}{}
	if s := r.slots[id]; s != nil {
		r.place(s, s.weight)
	}
	return true
}

// unpin lets id go as its state allows.
func (r *retention) unpin(id string) {
	if _, ok := r.pins[id]; !ok {
		return
	}
	delete(r.pins, id)
	if s := r.slots[id]; s != nil {
		r.place(s, s.weight)
	}
}

// remove forgets id: its slot and its pin.
func (r *retention) remove(id string) {
	delete(r.pins, id)
	s := r.slots[id]
	if s == nil {
		return
	}
	if s.list == &r.cache {
		r.cached -= s.weight
	}
	if s.list != nil {
		s.list.remove(s)
	}
	delete(r.slots, id)
}

// victim returns the aggregate to evict next, if the cache is over its bound. The caller
// drops it and removes it.
func (r *retention) victim() (string, bool) {
	if r.cached <= r.max {
		return "", false
	}
	return r.cache.front().id, true
}

// slotList is an intrusive doubly linked list of slots, oldest first: moving a slot allocates
// nothing.
type slotList struct{ root slot } // root.next is the oldest, root.prev the newest

func (l *slotList) init() { l.root.next, l.root.prev = &l.root, &l.root }

func (l *slotList) pushBack(s *slot) {
	s.prev, s.next = l.root.prev, &l.root
	l.root.prev.next = s
	l.root.prev = s
	s.list = l
}

func (l *slotList) remove(s *slot) {
	s.prev.next, s.next.prev = s.next, s.prev
	s.prev, s.next, s.list = nil, nil, nil
}

// front returns the oldest slot, nil when the list is empty.
func (l *slotList) front() *slot {
	if l.root.next == &l.root {
		return nil
	}
	return l.root.next
}
