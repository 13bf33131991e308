package orchestrator

import (
	"context"
	"time"

	"github.com/executor-dev/executor/domain/plan"
)

// Limits are the limits a plan's starts obey across every executor that shares the Queue.
type Limits struct {
	MaxConcurrency int // tasks claimed and not done, at once, plan-wide
	StartRate      int // task starts per minute, plan-wide; 0: no pacing
	FailureBudget  int // failed tasks after which the queue is emptied; 0: none
}

// limitsOf returns p's limits.
func limitsOf(p *plan.Plan) Limits {
	mc := p.MaxConcurrency()
	if r := p.Rollout(); r.Enabled() && r.Waves[p.Ring().Index].MaxConcurrency > 0 {
		mc = r.Waves[p.Ring().Index].MaxConcurrency // the current ring's own
	}
	return Limits{MaxConcurrency: mc, StartRate: p.StartRate(), FailureBudget: p.FailureBudget()}
}

// Claimed is a task some executor claimed from its plan's queue and has not declared done.
type Claimed struct {
	Executor string    // the claimer's name
	Since    time.Time // when it claimed the task
}

// Queue holds the never-started tasks of RUNNING plans and the tasks claimed from them, and
// enforces each plan's limits (maxConcurrency, startRate, failureBudget, a pause) for the plan
// as a whole, atomically (infra/dispatch: in process for the in-memory store, in Redis for
// executors sharing one Redis, where every executor takes work from every plan). A task is
// queued (Push, Return), then claimed by one executor (ClaimN), then done (Done), handed back
// (Return) or released (Release); Remove and Drain take queued tasks out unstarted.
type Queue interface {
	// Push appends ids to the plan's queue (ids already queued or claimed are not added
	// again) and records its limits. A failed Push of a shared Queue may have queued them all
	// the same: the caller pushes them again later, never to another queue.
	Push(ctx context.Context, planID string, lim Limits, ids []string) error
	// Return hands a claimed task back to the front of its plan's queue, freeing its slot.
	Return(ctx context.Context, planID, taskID string) error
	// ClaimN takes up to n of the plan's next tasks for executor (one for a paced plan), front
	// first, when its limits allow: none and 0 when nothing can start now (empty, paused, at
	// maxConcurrency); none and wait > 0 when the start rate holds the next start back.
	ClaimN(ctx context.Context, planID, executor string, n int) (ids []string, wait time.Duration, err error)
	// Done frees a claimed task's slot as its run ended (failed: FAILED, which counts toward
	// the failure budget; the failure that exhausts it empties the queue and returns what it
	// held). left is what the plan still has queued or claimed.
	Done(ctx context.Context, planID, taskID string, failed bool) (drained []string, left int, err error)
	// DoneClaim is Done and, in the same atomic step, a claim of the plan's front task for
	// executor when the plan lets one start now (not paused, not paced, a slot free): the
	// worker whose run ended goes on with next ("": nothing claimed) without a claim of its
	// own.
	DoneClaim(ctx context.Context, planID, taskID string, failed bool, executor string) (drained []string, left int, next string, err error)
	// SetPaused stops (or lets again) the plan's claims.
	SetPaused(ctx context.Context, planID string, paused bool) error
	// Remove takes ids out of the plan's queue and returns those that were queued.
	Remove(ctx context.Context, planID string, ids []string) ([]string, error)
	// Drain empties the plan's queue and returns what it held.
	Drain(ctx context.Context, planID string) ([]string, error)
	// Release frees a claimed task's slot without counting or requeueing it (its claimer is
	// gone); it reports whether the task was claimed.
	Release(ctx context.Context, planID, taskID string) (bool, error)
	// InFlight returns the plan's claimed tasks by task id.
	InFlight(ctx context.Context, planID string) (map[string]Claimed, error)
	// Len returns how many of the plan's tasks are queued and claimed.
	Len(ctx context.Context, planID string) (queued, claimed int, err error)
	// Plans returns the plans with queued or claimed tasks.
	Plans(ctx context.Context) ([]string, error)
	// Close forgets an ended plan.
	Close(ctx context.Context, planID string) error
	// Woken is signalled when something may have become claimable, on any executor.
	Woken() <-chan struct{}
	// Shared reports whether the queue outlives this process (Redis): then a clean stop
	// hands its runs back instead of interrupting them, and leaves queued tasks queued.
	Shared() bool
}
