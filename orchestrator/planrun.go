package orchestrator

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
)

// planRun starts one plan's queued tasks, honouring its concurrency and pause. It lives while
// the plan has queued or running tasks and is replaced by a new one when work arrives later.
type planRun struct {
	planID   string
	renderer *stage.Renderer
	canary   map[string]bool // the canary wave's task ids while the plan is in phase CANARY
	pace     *rate.Limiter   // the plan's startRate; nil: no pacing

	mu      sync.Mutex
	limit   int
	queue   []string    // task ids waiting to start, in plan order
	queued  *queueCount // the orchestrator's count of queued tasks: changes with queue
	running int
	failed  int
	budget  int // 0: none
	paused  bool
	closed  bool          // no more work will be taken: enqueue must start a new planRun
	wake    chan struct{} // signalled (non-blocking) whenever a wait condition may have changed
}

func newPlanRun(p *plan.Plan, paused bool) *planRun {
	pr := &planRun{
		planID: p.ID(), renderer: stage.NewRenderer(),
		limit: p.MaxConcurrency(), budget: p.FailureBudget(), paused: paused, wake: make(chan struct{}, 1),
	}
	if p.Phase() == plan.PhaseCanary {
		pr.canary = make(map[string]bool, p.Canary().Tenants)
		for _, id := range p.CanaryTaskIDs() {
			pr.canary[id] = true
		}
	}
	if n := p.StartRate(); n > 0 {
		// One start every minute/n, no burst: the first task starts at once.
		pr.pace = rate.NewLimiter(rate.Every(time.Minute/time.Duration(n)), 1)
	}
	return pr
}

func (pr *planRun) lock()   { pr.mu.Lock() }
func (pr *planRun) unlock() { pr.mu.Unlock() }

func (pr *planRun) signal() {
	select {
	case pr.wake <- struct{}{}:
	default:
	}
}

// push queues ids unless the run has closed; it reports whether they were queued.
func (pr *planRun) push(ids []string) bool {
	pr.lock()
	defer pr.unlock()
	if pr.closed {
		return false
	}
	pr.queue = append(pr.queue, ids...)
	pr.queued.add(len(ids))
	pr.signal()
	return true
}

// next waits until a queued task may start and returns it, counting it as running. It returns
// false, closing the run, once nothing is queued or running, or when ctx ends.
func (pr *planRun) next(ctx context.Context) (string, bool) {
	for {
		pr.lock()
		switch {
		case len(pr.queue) == 0 && pr.running == 0:
			pr.closed = true
			pr.unlock()
			return "", false
		case !pr.paused && len(pr.queue) > 0 && pr.running < pr.limit:
			if wait := pr.wait(); wait > 0 {
				pr.unlock()
				t := time.NewTimer(wait)
				select { // a pause, cancel or drain meanwhile is seen on the next pass
				case <-t.C:
				case <-pr.wake:
				case <-ctx.Done():
					t.Stop()
					return pr.abandon()
				}
				t.Stop()
				continue
			}
			id := pr.queue[0]
			pr.queue = pr.queue[1:]
			pr.queued.add(-1)
			pr.running++
			pr.unlock()
			return id, true
		}
		pr.unlock()
		select {
		case <-pr.wake:
		case <-ctx.Done():
			return pr.abandon()
		}
	}
}

// abandon closes the run as its context ended: nothing will start what it queued.
func (pr *planRun) abandon() (string, bool) {
	pr.lock()
	defer pr.unlock()
	pr.closed = true
	pr.queued.add(-len(pr.queue))
	pr.queue = nil
	return "", false
}

// wait reports how long the start rate holds the next start back, taking the start when it
// does not (0). The caller holds pr's lock.
func (pr *planRun) wait() time.Duration {
	if pr.pace == nil {
		return 0
	}
	r := pr.pace.Reserve()
	if d := r.Delay(); d > 0 {
		r.Cancel() // not taken: the start is decided again when the wait ends
		return d
	}
	return 0
}

// ended records how a started task's run ended (failed: FAILED) and returns the queued ids
// to cancel when this failure exhausted the failure budget. The run still counts as running
// until release, so the plan cannot settle before those ids are cancelled.
func (pr *planRun) ended(failed bool) (drained []string) {
	pr.lock()
	defer pr.unlock()
	if failed {
		pr.failed++
		if pr.budget > 0 && pr.failed >= pr.budget {
			drained, pr.queue = pr.queue, nil
			pr.queued.add(-len(drained))
		}
	}
	return drained
}

// release stops counting a started task as running.
func (pr *planRun) release() {
	pr.lock()
	defer pr.unlock()
	pr.running--
	pr.signal()
}

// drain empties the queue and returns what it held.
func (pr *planRun) drain() []string {
	pr.lock()
	defer pr.unlock()
	q := pr.queue
	pr.queue = nil
	pr.queued.add(-len(q))
	pr.signal()
	return q
}

func (pr *planRun) setPaused(p bool) {
	pr.lock()
	defer pr.unlock()
	pr.paused = p
	pr.signal()
}
