package app

import (
	"context"
	"sync"
	"time"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/lease"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// Kinds resolves stage kinds.
type Kinds interface {
	Handler(kind string) (stage.Handler, bool)
	Kinds() []string // the registered kind names, sorted (an unknown kind's error lists them)
}

// Holders reports who holds a tenant's lease.
type Holders interface {
	Holder(ctx context.Context, tenantID string) (lease.Holder, bool, error)
}

// Runner starts and controls runs: the orchestrator.
type Runner interface {
	Launch(ctx context.Context, p *plan.Plan) error
	Watch(planID string) (changed <-chan struct{}, stop func())
	PausePlan(ctx context.Context, planID string) error
	ResumePlan(ctx context.Context, planID string) error
	CancelPlan(ctx context.Context, planID string) error
	PauseTask(ctx context.Context, taskID string) error
	ResumeTask(ctx context.Context, taskID string) error
	CancelTask(ctx context.Context, taskID string) error
	RetryTask(ctx context.Context, taskID string, fromCheckpoint bool) error
	// DecideTask records an operator's decision on a WAITING task's gate and queues it.
	DecideTask(ctx context.Context, taskID string, d stage.Decision) error
	// ApprovePlan starts the tasks past a plan's canary wave; RejectPlan halts the plan there.
	ApprovePlan(ctx context.Context, planID string) error
	RejectPlan(ctx context.Context, planID string) error
	// Unlock removes a tenant's lease whoever holds it and fences its holder.
	Unlock(ctx context.Context, tenantID string) (lease.Unlocked, error)
	// Reap returns tasks as they stand, with RUNNING tasks whose owner is gone interrupted,
	// and how many it interrupted.
	Reap(ctx context.Context, tasks []*task.Task) ([]*task.Task, int, error)
	// Queued returns how many tasks wait to start across every plan; Workers how many run at
	// once. Submit refuses a plan that would queue more than Limits.MaxQueued (ErrBusy).
	Queued() int
	Workers() int
	// Runs reports whether this executor runs the task now.
	Runs(taskID string) bool
	// Relaunch makes sure a plan whose launch may have been cut short runs: a PENDING plan
	// is launched, a RUNNING or PAUSED one has its PENDING tasks queued again (idempotent).
	Relaunch(ctx context.Context, planID string) error
}

// Creator stores a new plan with its tasks as one step against every other creator: nothing
// is stored, and a *task.BusyError is returned, when a tenant's latest task has not ended.
type Creator interface {
	CreatePlan(ctx context.Context, p *plan.Plan, tasks []*task.Task) error
}

// Deps are the Service's collaborators.
type Deps struct {
	Creator     Creator
	Plans       plan.Repository
	Tasks       task.Repository
	Checkpoints checkpoint.Store
	Index       PlanIndex // the store's index of each plan's tasks (summaries, filters)
	Kinds       Kinds
	Holders     Holders
	Runner      Runner
	Events      EventSource      // GET /v1/events; nil: none (WatchEvents says ErrNoEvents)
	Members     Members          // GET /v1/executors; nil: none (Executors lists nothing)
	Clock       func() time.Time // default time.Now
	// RefuseNewPlans, when set and true, makes Submit answer ErrUnavailable (the executor runs
	// degraded and --degraded-new-plans=reject).
	RefuseNewPlans func() bool
	// Degraded is set where other executors share the store (--degraded-new-plans=reject):
	// then the commands on what this executor cannot see (cancels and pauses of tasks it does
	// not run, retries, resumes, gate decisions and plan-wide commands) write with
	// task.MustShare, and answer ErrDegraded while it reports true (Redis away) or when their
	// writes find Redis away.
	Degraded func() bool
	// NotReady, when set and true, makes new plans and the commands Degraded refuses answer
	// ErrNotReady, and the queries of plans, tasks, tenants and checkpoints ErrNotReadyToRead
	// (the executor has not reached Redis since it started).
	NotReady func() bool
	// ShuttingDown, when set and true, makes new plans, retries and resumes answer
	// ErrShuttingDown (the executor is shutting down).
	ShuttingDown func() bool
	// Limits bound submissions; zero fields take the defaults.
	Limits Limits
	// ExecutorURL returns the base URL of this executor's HTTP API, which templates read as
	// .ExecutorURL when a submission is checked. Default: none (empty).
	ExecutorURL func() string
}

// executorURL returns the base URL of this executor's HTTP API, or "" when it has none.
func (s *Service) executorURL() string {
	if s.ExecutorURL == nil {
		return ""
	}
	return s.ExecutorURL()
}

// Service implements the use cases.
type Service struct {
	Deps
	submitMu sync.Mutex // a conflict check and the creation it allows happen as one step
}

// New returns a Service.
func New(d Deps) *Service {
	if d.Clock == nil {
		d.Clock = time.Now
	}
	d.Limits = d.Limits.withDefaults()
	return &Service{Deps: d}
}

func (s *Service) now() time.Time { return s.Clock().UTC() }
