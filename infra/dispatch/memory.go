package dispatch

import (
	"context"
	"slices"
	"sync"
	"time"
)

// MemoryOptions configures a Memory.
type MemoryOptions struct {
	// Clock is the time of claims and of the start pacing; nil means time.Now.
	Clock func() time.Time
}

// Memory is the dispatch queue of a single process: the same behaviour as Redis, held under
// one mutex. Its state dies with the process. It never fails but for invalid arguments; the
// contexts are not used.
type Memory struct {
	now   func() time.Time
	woken chan struct{}

	mu     sync.Mutex
	plans  map[string]*memPlan
	active map[string]struct{} // plans marked active by a push, until Plans prunes them
}

// memPlan is one plan's dispatch state.
type memPlan struct {
	lim      Limits
	queue    []string // queued ids, front first
	queued   map[string]struct{}
	inflight map[string]InFlight
	again    map[string]bool // pushed again while in flight: queued when the claim ends
	failed   int
	paused   bool
	next     time.Time // the earliest next start while paced
}

// NewMemory returns an empty in-process dispatch queue.
func NewMemory(opts MemoryOptions) *Memory {
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	return &Memory{
		now:    opts.Clock,
		woken:  make(chan struct{}, 1),
		plans:  map[string]*memPlan{},
		active: map[string]struct{}{},
	}
}

// plan returns planID's state, created when missing. The caller holds m.mu.
func (m *Memory) plan(planID string) *memPlan {
	p := m.plans[planID]
	if p == nil {
		p = &memPlan{lim: Limits{MaxConcurrency: 1}, queued: map[string]struct{}{}, inflight: map[string]InFlight{}, again: map[string]bool{}}
		m.plans[planID] = p
	}
	return p
}

// Start does nothing: a Memory wakes its own claimers as it goes.
func (m *Memory) Start(context.Context) error { return nil }

// Stop does nothing.
func (m *Memory) Stop(context.Context) error { return nil }

// Woken signals (capacity 1, coalesced) that a task may have become claimable: a push, a
// task handed back, ended or released, an unpause.
func (m *Memory) Woken() <-chan struct{} { return m.woken }

// Push appends ids at the back of the plan's queue, in order, leaving out those queued or
// in flight already (and repeats within ids); stores lim (replacing the plan's limits),
// marks the plan active and wakes claimers.
func (m *Memory) Push(_ context.Context, planID string, lim Limits, ids []string) error {
	if err := checkPush(planID, lim, ids); err != nil {
		return err
	}
	m.mu.Lock()
	p := m.plan(planID)
	p.lim = lim
	for _, id := range ids {
		if _, ok := p.queued[id]; ok {
			continue
		}
		if _, ok := p.inflight[id]; ok {
			p.again[id] = true // a retry of a run still winding down: queued when it ends
			continue
		}
		p.queued[id] = struct{}{}
		p.queue = append(p.queue, id)
	}
	m.active[planID] = struct{}{}
	m.mu.Unlock()
	signal(m.woken)
	return nil
}

// Return hands a claimed task back: it leaves the in-flight set (its slot is freed, it does
// not count as a failure) and goes to the front of the queue. A task that is not in flight
// is left alone (a repeated Return queues it once). Wakes claimers.
func (m *Memory) Return(_ context.Context, planID, taskID string) error {
	if err := checkIDs("return", planID, taskID); err != nil {
		return err
	}
	m.mu.Lock()
	p := m.plans[planID]
	back := false
	if p != nil {
		if _, ok := p.inflight[taskID]; ok {
			delete(p.inflight, taskID)
			delete(p.again, taskID)
			p.queue = slices.Insert(p.queue, 0, taskID)
			p.queued[taskID] = struct{}{}
			back = true
		}
	}
	m.mu.Unlock()
	if back {
		signal(m.woken)
	}
	return nil
}

// Claim takes the front task for executor: ("", 0, nil) when the plan is paused, its queue
// is empty or MaxConcurrency tasks are in flight; ("", d, nil) when StartRate holds the start
// back for d; otherwise the task, now in flight for executor.
func (m *Memory) Claim(ctx context.Context, planID, executor string) (string, time.Duration, error) {
	ids, wait, err := m.ClaimN(ctx, planID, executor, 1)
	if len(ids) == 0 {
		return "", wait, err
	}
	return ids[0], 0, nil
}

// ClaimN is Claim of up to n tasks (one for a paced plan), front first.
func (m *Memory) ClaimN(_ context.Context, planID, executor string, n int) ([]string, time.Duration, error) {
	if err := checkIDs("claim", planID); err != nil {
		return nil, 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.plans[planID]
	if p == nil || p.paused {
		return nil, 0, nil
	}
	n = min(max(n, 1), len(p.queue), p.lim.MaxConcurrency-len(p.inflight))
	if n <= 0 {
		return nil, 0, nil
	}
	now := m.now()
	if p.lim.StartRate > 0 {
		if now.Before(p.next) {
			return nil, p.next.Sub(now), nil
		}
		p.next = now.Add(interval(p.lim.StartRate))
		n = 1
	}
	ids := make([]string, n)
	copy(ids, p.queue[:n])
	clear(p.queue[:n])
	p.queue = p.queue[n:]
	for _, id := range ids {
		delete(p.queued, id)
		p.inflight[id] = InFlight{Executor: executor, Since: now}
	}
	return ids, 0, nil
}

// Done records that a claimed task's run ended: it leaves the in-flight set (a task not in
// flight counts nothing), and a failure counts toward the budget; a failure at or past the
// budget empties the queue and returns what it held, in order. left is what the plan has
// queued and in flight after the call. Wakes claimers.
func (m *Memory) Done(ctx context.Context, planID, taskID string, failed bool) ([]string, int, error) {
	drained, left, _, err := m.DoneClaim(ctx, planID, taskID, failed, "")
	return drained, left, err
}

// DoneClaim is Done, then, atomically with it, a claim of the plan's front task for executor
// ("": none) when the plan lets one start now (not paused, not paced, a slot free). next is
// "" when nothing was claimed; claimers are woken only when the freed slot was not taken.
func (m *Memory) DoneClaim(_ context.Context, planID, taskID string, failed bool, executor string) ([]string, int, string, error) {
	if err := checkIDs("done", planID, taskID); err != nil {
		return nil, 0, "", err
	}
	m.mu.Lock()
	p := m.plans[planID]
	if p == nil {
		m.mu.Unlock()
		return nil, 0, "", nil
	}
	var drained []string
	next := ""
	_, was := p.inflight[taskID]
	if was {
		delete(p.inflight, taskID)
		if failed {
			p.failed++
			if p.lim.FailureBudget > 0 && p.failed >= p.lim.FailureBudget {
				drained = p.drain()
			}
		}
		p.requeueAgain(taskID)
		if executor != "" && !p.paused && p.lim.StartRate == 0 && len(p.queue) > 0 && len(p.inflight) < p.lim.MaxConcurrency {
			next = p.queue[0]
			p.queue[0] = ""
			p.queue = p.queue[1:]
			delete(p.queued, next)
			p.inflight[next] = InFlight{Executor: executor, Since: m.now()}
		}
	}
	left := len(p.queue) + len(p.inflight)
	m.mu.Unlock()
	if was && next == "" {
		signal(m.woken)
	}
	return drained, left, next, nil
}

// requeueAgain queues, at the back, a task whose claim just ended if it was pushed again
// meanwhile. The caller holds m.mu.
func (p *memPlan) requeueAgain(taskID string) {
	if !p.again[taskID] {
		return
	}
	delete(p.again, taskID)
	p.queued[taskID] = struct{}{}
	p.queue = append(p.queue, taskID)
}

// drain empties p's queue and returns what it held. The caller holds m.mu.
func (p *memPlan) drain() []string {
	ids := p.queue
	p.queue = nil
	clear(p.queued)
	return ids
}

// SetPaused pauses (Claim takes nothing) or unpauses the plan; an unpause wakes claimers.
func (m *Memory) SetPaused(_ context.Context, planID string, paused bool) error {
	if err := checkIDs("pause", planID); err != nil {
		return err
	}
	m.mu.Lock()
	m.plan(planID).paused = paused
	m.mu.Unlock()
	if !paused {
		signal(m.woken)
	}
	return nil
}

// Remove takes ids out of the queue and returns those that were queued, in ids' order.
func (m *Memory) Remove(_ context.Context, planID string, ids []string) ([]string, error) {
	if err := checkIDs("remove", planID); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.plans[planID]
	if p == nil {
		return nil, nil
	}
	var removed []string
	for _, id := range ids {
		if _, ok := p.queued[id]; ok {
			delete(p.queued, id)
			removed = append(removed, id)
		}
	}
	if len(removed) > 0 {
		p.queue = slices.DeleteFunc(p.queue, func(id string) bool {
			_, ok := p.queued[id]
			return !ok
		})
	}
	return removed, nil
}

// Drain empties the queue and returns what it held, in order.
func (m *Memory) Drain(_ context.Context, planID string) ([]string, error) {
	if err := checkIDs("drain", planID); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.plans[planID]
	if p == nil {
		return nil, nil
	}
	return p.drain(), nil
}

// Release removes a task from the in-flight set without queueing or counting it (the slot
// of a dead executor's run) and reports whether it was in flight. A freed slot wakes
// claimers.
func (m *Memory) Release(_ context.Context, planID, taskID string) (bool, error) {
	if err := checkIDs("release", planID, taskID); err != nil {
		return false, err
	}
	m.mu.Lock()
	p := m.plans[planID]
	was := false
	if p != nil {
		_, was = p.inflight[taskID]
		delete(p.inflight, taskID)
		if was {
			p.requeueAgain(taskID)
		}
	}
	m.mu.Unlock()
	if was {
		signal(m.woken)
	}
	return was, nil
}

// InFlight returns the plan's claimed tasks by id.
func (m *Memory) InFlight(_ context.Context, planID string) (map[string]InFlight, error) {
	if err := checkIDs("in-flight", planID); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]InFlight{}
	if p := m.plans[planID]; p != nil {
		for id, f := range p.inflight {
			out[id] = f
		}
	}
	return out, nil
}

// Len returns how many of the plan's tasks are queued and in flight.
func (m *Memory) Len(_ context.Context, planID string) (queued, inflight int, err error) {
	if err := checkIDs("len", planID); err != nil {
		return 0, 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.plans[planID]; p != nil {
		return len(p.queue), len(p.inflight), nil
	}
	return 0, 0, nil
}

// Plans returns the active plans (those with queued or in-flight work), sorted, and stops
// marking active the ones that have neither.
func (m *Memory) Plans(context.Context) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := make([]string, 0, len(m.active))
	for id := range m.active {
		if p := m.plans[id]; p != nil && len(p.queue)+len(p.inflight) > 0 {
			ids = append(ids, id)
			continue
		}
		delete(m.active, id)
	}
	slices.Sort(ids)
	return ids, nil
}

// Close forgets the plan (it ended): its queue, in-flight set, limits, counters and active
// mark.
func (m *Memory) Close(_ context.Context, planID string) error {
	if err := checkIDs("close", planID); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.plans[planID]; p != nil && (len(p.queue) > 0 || len(p.inflight) > 0) {
		return nil // work arrived meanwhile: the plan stays
	}
	delete(m.plans, planID)
	delete(m.active, planID)
	return nil
}
