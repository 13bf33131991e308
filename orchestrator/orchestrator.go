package orchestrator

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
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
//
// It is a facade over services that share one core (core.go: the stores, the
// configuration, the locks and the lifetime every service stops with): the dispatcher claims
// tasks and runs them (each run's logic is the taskRun's own), the feeder puts tasks in
// the queues, the settler ends plans, the rollout moves rolling plans from ring to ring,
// control carries operators' commands and recovery judges runs whose executor is gone.
type Orchestrator struct {
	*core
	started  atomic.Bool   // Start was called: the dispatch loop and the reconciler run
	cutShort chan struct{} // closed by CutShort: Stop's grace is over
	cutOnce  sync.Once
}

// New returns an orchestrator over the given stores, taking work from cfg.Queue (required).
func New(plans plan.Repository, tasks task.Repository, ckpts checkpoint.Store, locker Locker, kinds Kinds, cfg Config) *Orchestrator {
	cfg = cfg.withDefaults()
	if cfg.Queue == nil {
		panic("orchestrator: Config.Queue is required")
	}
	ctx, stop := context.WithCancelCause(context.Background())
	c := &core{
		ctx: ctx, stop: stop,
		plans: plans, tasks: tasks, ckpts: ckpts, locker: locker, kinds: kinds, cfg: cfg, queue: cfg.Queue,
		stopClaims: make(chan struct{}),
		active:     map[string]*taskRun{},
		watchers:   map[string][]chan struct{}{},
	}
	c.services = &services{
		dispatcher: &dispatcher{core: c,
			slots:      make(chan struct{}, cfg.Workers),
			dispatched: make(chan struct{}),
			poke:       make(chan struct{}, 1),
			here:       map[string]*planHere{},
			kindsOK:    map[string]bool{},
		},
		feeder:   &feeder{core: c},
		settler:  &settler{core: c, resettle: map[string]time.Time{}},
		rollout:  &rollout{core: c},
		control:  &control{core: c},
		recovery: &recovery{core: c, reconciled: make(chan struct{})},
	}
	return &Orchestrator{core: c, cutShort: make(chan struct{})}
}

// Start starts taking work from the Queue (the dispatch loop) and, on a shared Queue, the
// reconciler of claims whose claimer is gone, until Stop; ctx is not used. It never fails.
// Only the first Start has an effect.
func (o *Orchestrator) Start(context.Context) error {
	if o.started.Swap(true) {
		return nil
	}
	go o.dispatcher.dispatch()
	go o.recovery.reconcile()
	return nil
}
