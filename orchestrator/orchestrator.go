package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// Causes of a run's cancellation; they decide the status the task ends in.
var (
	errCancelRequested = errors.New("cancelled by operator")
	errShutdown        = errors.New("executor shutting down")
	errLeaseLost       = errors.New("tenant lease lost")
	errFenced          = errors.New("another executor took the task while Redis was away")
)

// persistTimeout bounds a write made after the run's own context has ended.
const persistTimeout = 10 * time.Second

// Orchestrator runs plans. Start it before use and Stop it to end every run.
type Orchestrator struct {
	plans  plan.Repository
	tasks  task.Repository
	ckpts  checkpoint.Store
	locker Locker
	kinds  Kinds
	cfg    Config
	queue  Queue
	slots  chan struct{} // global worker cap
	queued atomic.Int64  // tasks queued but not started, across every plan, as last counted (Queued)
	// requeueDue: Redis lost its data (the shared Queue's with it) and the PENDING tasks of
	// the plans that have not ended are not all queued again yet (requeueAll).
	requeueDue atomic.Bool
	// lostAt: when this executor last saw Redis come back without its data (Unix
	// nanoseconds; 0: never). Tasks missing soon after are not judged lost (missingTooSoon).
	lostAt atomic.Int64

	planLocks keyedMutex
	taskLocks keyedMutex
	witnesses settleWitnesses // where each plan's settle last found a task not ended

	ctx        context.Context
	stop       context.CancelCauseFunc
	wg         sync.WaitGroup // the runs
	draining   atomic.Bool    // Stop has begun: nothing starts any more
	contended  atomic.Bool    // the dispatch loop last listed more than one plan with work
	started    atomic.Bool    // Start was called: the dispatch loop and the reconciler run
	stopClaims chan struct{}  // closed by Stop: the dispatch loop claims nothing more
	haltOnce   sync.Once
	cutShort   chan struct{} // closed by CutShort: Stop's grace is over
	cutOnce    sync.Once
	dispatched chan struct{} // closed when the dispatch loop has returned
	poke       chan struct{} // capacity 1: this executor pushed work (the loop lists plans again)
	reconciled chan struct{} // closed when the reconciler has returned

	mu       sync.Mutex
	here     map[string]*planHere              // by plan id: plans this executor runs tasks of
	active   map[string]*taskRun               // by task id
	watchers map[string][]chan struct{}        // by plan id: closed at the plan's next change
	redo     []func(ctx context.Context) error // changes the shared Queue refused, made again by the loop
	resettle map[string]time.Time              // by plan id: settled while degraded or in vain, settled again once Redis answers, until then
}

// New returns an orchestrator over the given stores, taking work from cfg.Queue (required).
func New(plans plan.Repository, tasks task.Repository, ckpts checkpoint.Store, locker Locker, kinds Kinds, cfg Config) *Orchestrator {
	cfg = cfg.withDefaults()
	if cfg.Queue == nil {
		panic("orchestrator: Config.Queue is required")
	}
	ctx, stop := context.WithCancelCause(context.Background())
	return &Orchestrator{
		ctx: ctx, stop: stop,
		plans: plans, tasks: tasks, ckpts: ckpts, locker: locker, kinds: kinds, cfg: cfg, queue: cfg.Queue,
		slots:      make(chan struct{}, cfg.Workers),
		stopClaims: make(chan struct{}),
		cutShort:   make(chan struct{}),
		dispatched: make(chan struct{}),
		reconciled: make(chan struct{}),
		poke:       make(chan struct{}, 1),
		here:       map[string]*planHere{},
		active:     map[string]*taskRun{},
		watchers:   map[string][]chan struct{}{},
		resettle:   map[string]time.Time{},
	}
}

// Start starts taking work from the Queue (the dispatch loop) and, on a shared Queue, the
// reconciler of claims whose claimer is gone, until Stop; ctx is not used. It never fails.
// Only the first Start has an effect.
func (o *Orchestrator) Start(context.Context) error {
	if o.started.Swap(true) {
		return nil
	}
	go o.dispatch()
	go o.reconcile()
	return nil
}

func (o *Orchestrator) now() time.Time { return o.cfg.Clock().UTC() }

// Launch starts a newly created plan: at once (p then reads as started), or, when it is
// SCHEDULED, by handing it to the Scheduler, which calls StartScheduled at its startAt.
// A plan launched as a shutdown begins starts with every task INTERRUPTED (see enqueue).
func (o *Orchestrator) Launch(ctx context.Context, p *plan.Plan) error {
	if p.Status() == plan.Scheduled {
		if o.cfg.Scheduler == nil {
			return ErrNoScheduler
		}
		if err := o.cfg.Scheduler.Schedule(ctx, p.ID(), p.StartAt()); err != nil {
			return fmt.Errorf("orchestrator: schedule plan %s: %w", p.ID(), err)
		}
		return nil
	}
	unlock := o.planLocks.lock(p.ID())
	defer unlock()
	started, err := o.begin(ctx, p.ID(), func(*plan.Plan, time.Time) error { return nil })
	if err != nil {
		return err
	}
	*p = *started // the caller (the submission's answer) sees the plan as started
	return nil
}

// begin starts a plan by a compare-and-set: release (when it applies, a SCHEDULED plan is
// made PENDING first; errSkip when the plan needs no start any more), then RUNNING, and its
// tasks queued (of a rolling plan, those of its rings that may start). The caller holds the plan
// lock.
func (o *Orchestrator) begin(ctx context.Context, planID string, release func(p *plan.Plan, now time.Time) error) (*plan.Plan, error) {
	p, err := o.updatePlan(ctx, planID, func(p *plan.Plan) error {
		if err := release(p, o.now()); err != nil {
			return err
		}
		return p.Start(o.now())
	})
	if err != nil {
		return nil, fmt.Errorf("orchestrator: start plan %s: %w", planID, err)
	}
	ids := p.StartableTaskIDs()
	o.push(ctx, p, ids)
	return p, nil
}

// cancelQueued cancels tasks that were queued but never started.
func (o *Orchestrator) cancelQueued(ids []string, reason string) {
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

// settle sets a plan's status from its tasks when every task has ended: FAILED if some
// failed or were interrupted, else CANCELLED if some were cancelled, else COMPLETED. Tasks
// still PENDING, RUNNING, PAUSED or WAITING keep the plan as it is; an ended plan's queue is
// closed. A plan paused because an executor was lost is left for an SRE, and so is one with
// an INTERRUPTED task still claimed: its run's loss is being judged (the reconciler pauses the
// plan before it frees the claim), or its run is ending (it settles the plan once its slot is
// freed).
//
// A settle made while the store runs degraded (Redis away) decides from this executor's
// copies, which may be stale (another executor may have ended the plan's other tasks
// meanwhile), and its write may lose at the write-back; one that failed decided nothing. Such
// plans are remembered and settled again once Redis answers (resettle.go).
func (o *Orchestrator) settle(planID string) {
	unlock := o.planLocks.lock(planID)
	defer unlock()
	o.settleHeld(planID)
}

// settleHeld is settle for a caller that holds the plan lock.
func (o *Orchestrator) settleHeld(planID string) {
	if o.cfg.Shared && o.cfg.Degraded() {
		// This executor's copies of the plan's other tasks may be stale (they may have been
		// retried or cancelled on another executor): the plan is settled from Redis once it
		// answers, never ended from memory.
		o.markResettle(planID)
		return
	}
	err := o.settleFromTasks(planID)
	if err != nil {
		o.cfg.Logger.Error("settle plan", "plan_id", planID, "err", err)
	}
	if o.cfg.Degraded() || (err != nil && !errors.Is(err, plan.ErrNotFound)) {
		o.markResettle(planID)
	}
}

// settleFromTasks is settle's decision and write, under the plan lock.
func (o *Orchestrator) settleFromTasks(planID string) error {
	ctx := context.WithoutCancel(o.ctx)
	p, err := o.plans.Plan(ctx, planID)
	if err != nil {
		return fmt.Errorf("orchestrator: settle plan %s: %w", planID, err)
	}
	if p.Status().Terminal() {
		o.witnesses.forget(planID)
		o.closeQueue(ctx, planID) // settled before; its queue may have outlived it
		return nil
	}
	if p.Status() == plan.Scheduled || pausedForLoss(p) {
		return nil
	}
	if p.Rollout().Enabled() && p.Ring().Phase == plan.RingRunning {
		// The ring's completion is judged here, once the plan's queue is empty (its last end,
		// on any executor; or the reconciler freeing the slot of an executor that died after
		// the end): the next ring starts, or the last one passes before the plan settles.
		o.judgeRing(ctx, p)
	}
	statuses, open, err := o.planStatuses(ctx, planID, p.TaskIDs())
	if err != nil || open {
		if err != nil {
			return fmt.Errorf("orchestrator: settle plan %s: %w", planID, err)
		}
		return nil
	}
	if o.missingTooSoon(planID, statuses) {
		return nil
	}
	failed, cancelled, interrupted, err := settledOutcome(statuses, p.TaskIDs())
	if err != nil {
		return fmt.Errorf("orchestrator: settle plan %s: %w", planID, err)
	}
	if judged, err := o.claimedAny(ctx, planID, interrupted); err != nil || judged {
		return err
	}
	_, err = o.updatePlan(ctx, planID, func(p *plan.Plan) error {
		if p.Status().Terminal() || p.Status() == plan.Scheduled || pausedForLoss(p) {
			return errSkip // settled meanwhile (by another executor), or paused for a lost executor
		}
		switch {
		case failed:
			return p.Fail(o.now())
		case cancelled:
			return p.Cancel(o.now())
		default:
			return p.Complete(o.now())
		}
	})
	if err != nil && !errors.Is(err, errSkip) {
		return fmt.Errorf("orchestrator: settle plan %s: %w", planID, err)
	}
	o.signal(ctx, sigPlan, planID) // the executors waiting on it read it again
	o.closeQueue(ctx, planID)
	return nil
}

// claimedAny reports whether one of ids (INTERRUPTED tasks of planID) is still claimed in the
// shared Queue. While degraded the claims cannot be read, and nothing judges a loss meanwhile
// (the plan is settled again from Redis once it answers).
func (o *Orchestrator) claimedAny(ctx context.Context, planID string, ids []string) (bool, error) {
	if len(ids) == 0 || o.cfg.Degraded() {
		return false, nil
	}
	claims, err := o.queue.InFlight(ctx, planID)
	if err != nil {
		return false, fmt.Errorf("orchestrator: settle plan %s: claims: %w", planID, err)
	}
	for _, id := range ids {
		if _, ok := claims[id]; ok {
			return true, nil
		}
	}
	return false, nil
}

// closeQueue forgets an ended plan's queues (each keeps a plan that has work again).
func (o *Orchestrator) closeQueue(ctx context.Context, planID string) {
	for _, q := range o.queues() {
		if err := q.Close(ctx, planID); err != nil {
			o.cfg.Logger.Debug("close the queue of an ended plan", "plan_id", planID, "err", err)
		}
	}
}

// Watch returns a channel closed at the plan's next status change, and a func that stops
// watching (call it when giving up, so abandoned long polls do not pile up).
func (o *Orchestrator) Watch(planID string) (<-chan struct{}, func()) {
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

func (o *Orchestrator) notify(planID string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, ch := range o.watchers[planID] {
		close(ch)
	}
	delete(o.watchers, planID)
}
