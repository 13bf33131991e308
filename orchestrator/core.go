package orchestrator

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// core is what every service of an orchestrator shares: the stores and the configuration,
// the task and plan locks, this executor's runs, the plans' watchers, and the one lifetime
// they all end with (ctx, cancelled by Stop after its grace; stopClaims, closed when Stop
// begins). Each service embeds it, and reaches the others through services.
type core struct {
	*services

	plans  plan.Repository
	tasks  task.Repository
	ckpts  checkpoint.Store
	locker Locker
	kinds  Kinds
	cfg    Config
	queue  Queue

	planLocks keyedMutex
	taskLocks keyedMutex

	ctx        context.Context
	stop       context.CancelCauseFunc
	wg         sync.WaitGroup // the runs
	draining   atomic.Bool    // Stop has begun: nothing starts any more
	stopClaims chan struct{}  // closed by Stop: the loops (dispatch, reconcile) return
	haltOnce   sync.Once

	noted notedSet // the once-per-plan notices met (notices.go)

	mu       sync.Mutex
	active   map[string]*taskRun        // by task id: this executor's runs
	watchers map[string][]chan struct{} // by plan id: closed at the plan's next change
}

// services are the parts of an orchestrator, each with one purpose.
type services struct {
	dispatcher *dispatcher // claims tasks from the queues and runs them (dispatch.go, taskrun.go)
	feeder     *feeder     // puts tasks in the queues, and again when a queue did not answer (fallback.go, pushlater.go)
	settler    *settler    // ends a plan once its tasks have ended (settle.go, resettle.go, missing.go)
	rollout    *rollout    // moves a rolling plan from ring to ring (rings.go, health.go)
	control    *control    // operators' commands, and their signals from other executors (control.go, launch.go, requeue.go, signal.go)
	recovery   *recovery   // judges the runs of executors that are gone, and unlocks tenants (reap.go, reconcile.go, unlock.go)
}

// dispatcher claims tasks from the Queue while a worker is free and runs them.
type dispatcher struct {
	*core
	slots      chan struct{}        // global worker cap
	queued     atomic.Int64         // tasks queued but not started, across every plan, as last counted (Queued)
	contended  atomic.Bool          // the dispatch loop last listed more than one plan with work
	dispatched chan struct{}        // closed when the dispatch loop has returned
	poke       chan struct{}        // capacity 1: this executor pushed work (the loop lists plans again)
	here       map[string]*planHere // by plan id: plans this executor runs tasks of; guarded by core.mu
	kindsOK    map[string]bool      // by plan id: whether this executor has its stages' kinds (runnable); guarded by core.mu
}

// wake has the dispatch loop list the plans with work again at once.
func (d *dispatcher) wake() {
	select {
	case d.poke <- struct{}{}:
	default:
	}
}

// feeder puts tasks in the queues: the shared Queue, the Fallback while it does not answer,
// and again, later, what a queue did not take.
type feeder struct {
	*core
	mu   sync.Mutex
	redo []func(ctx context.Context) error // changes the shared Queue refused, made again by the loop
	// requeueDue: Redis lost its data (the shared Queue's with it) and the PENDING tasks of
	// the plans that have not ended are not all queued again yet (requeueAll).
	requeueDue atomic.Bool
}

// settler ends a plan once its tasks have ended.
type settler struct {
	*core
	witnesses settleWitnesses // where each plan's settle last found a task not ended
	mu        sync.Mutex
	resettle  map[string]time.Time // by plan id: settled while degraded or in vain, settled again once Redis answers, until then
	// lostAt: when this executor last saw Redis come back without its data (Unix
	// nanoseconds; 0: never). Tasks missing soon after are not judged lost (missingTooSoon).
	lostAt atomic.Int64
}

// rollout moves a rolling plan from ring to ring: its bakes, health checks, approvals and
// failure budgets.
type rollout struct{ *core }

// control carries out operators' commands on plans and tasks, and follows those another
// executor received (signals).
type control struct{ *core }

// recovery judges the tasks of runs whose executor is gone (reaping, and the reconciler of
// claims) and unlocks tenants.
type recovery struct {
	*core
	reconciled chan struct{} // closed when the reconciler has returned
}

func (o *core) now() time.Time { return o.cfg.Clock().UTC() }

// cancelQueued cancels tasks that were queued but never started.
func (o *core) cancelQueued(ids []string, reason string) {
	for _, id := range ids {
		_, err := o.update(o.ctx, id, func(t *task.Task) (*checkpoint.Checkpoint, error) {
			if t.Status() != task.Pending {
				return nil, errSkip
			}
			return nil, t.Cancel(&task.Failure{Class: stage.ClassCancelled, Message: reason}, o.now())
		})
		if err != nil && !errors.Is(err, errSkip) {
			o.cfg.Logger.Error("cancel queued task", "task_id", id, "err", err)
		}
	}
}

// Watch returns a channel closed at the plan's next status change, and a func that stops
// watching (call it when giving up, so abandoned long polls do not pile up).
func (o *core) Watch(planID string) (<-chan struct{}, func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ch := make(chan struct{})
	o.watchers[planID] = append(o.watchers[planID], ch)
	return ch, func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		list := o.watchers[planID]
		for i, c := range list {
			if c == ch {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(o.watchers, planID)
		} else {
			o.watchers[planID] = list
		}
	}
}

func (o *core) notify(planID string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, ch := range o.watchers[planID] {
		close(ch)
	}
	delete(o.watchers, planID)
}

// degraded reports whether the store does not answer now (Redis away).
func (o *core) degraded() bool { return o.cfg.Availability.Availability().Degraded }

// claimsPaused returns how long new claims still wait after Redis lost its data (0: they do
// not).
func (o *core) claimsPaused() time.Duration { return o.cfg.Availability.Availability().ClaimsPaused }
