package app

import (
	"context"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/lease"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// The use cases' ports on what runs plans (the orchestrator, which server wires into each of
// them), one per use case; and on the kinds, the tenant locker and the store's creation of a
// plan. The store's repositories are the domain's (plan.Repository, task.Repository,
// checkpoint.Store); the index, the events and the member registry have their ports next to
// their use cases (PlanIndex, EventSource, Members).

// Kinds resolves stage kinds.
type Kinds interface {
	Handler(kind string) (stage.Handler, bool)
	Kinds() []string // the registered kind names, sorted (an unknown kind's error lists them)
}

// Holders reports who holds a tenant's lease.
type Holders interface {
	Holder(ctx context.Context, tenantID string) (lease.Holder, bool, error)
}

// Creator stores a new plan with its tasks as one step against every other creator: nothing
// is stored, and a *task.BusyError is returned, when a tenant's latest task has not ended.
type Creator interface {
	CreatePlan(ctx context.Context, p *plan.Plan, tasks []*task.Task) error
}

// Launcher starts the runs of a new plan (Submit).
type Launcher interface {
	// Launch starts a newly created plan: at once, or at its startAt when it is SCHEDULED.
	Launch(ctx context.Context, p *plan.Plan) error
	// Relaunch makes sure a plan whose launch may have been cut short runs: a PENDING plan
	// is launched, a RUNNING or PAUSED one has its PENDING tasks queued again (idempotent).
	Relaunch(ctx context.Context, planID string) error
	// Queued returns how many tasks wait to start across every plan; Workers how many run at
	// once. Submit refuses a plan that would queue more than Limits.MaxQueued (ErrBusy).
	Queued() int
	Workers() int
}

// PlanControl carries out an operator's commands on a plan (control, gates; and Submit's
// cancel of a plan it could not launch).
type PlanControl interface {
	PausePlan(ctx context.Context, planID string) error
	// ResumePlan resumes a paused plan and the tasks its pause paused; with all, the tasks
	// paused one by one too.
	ResumePlan(ctx context.Context, planID string, all bool) error
	CancelPlan(ctx context.Context, planID string) error
	// ApprovePlan starts the tasks past a plan's canary wave; RejectPlan halts the plan there.
	// d is the operator's decision (who, with which role): the plan's approvers rule judges it.
	ApprovePlan(ctx context.Context, planID string, d stage.Decision) error
	RejectPlan(ctx context.Context, planID string, d stage.Decision) error
}

// TaskControl carries out an operator's commands on a task (control, gates, bulk commands,
// a plan's retry).
type TaskControl interface {
	PauseTask(ctx context.Context, taskID string) error
	ResumeTask(ctx context.Context, taskID string) error
	CancelTask(ctx context.Context, taskID string) error
	// SkipTask ends a task that does not run without deploying its tenant, and settles its plan.
	SkipTask(ctx context.Context, taskID string) error
	RetryTask(ctx context.Context, taskID string, fromCheckpoint bool) error
	// RollbackTask starts a rollback of the task: a new run that undoes its completed stages.
	RollbackTask(ctx context.Context, taskID string) error
	// DecideTask records an operator's decision on a WAITING task's gate and queues it.
	DecideTask(ctx context.Context, taskID string, d stage.Decision) error
	// Runs reports whether this executor runs the task now: while degraded, a pause or a
	// cancel takes effect only on a task it runs.
	Runs(taskID string) bool
}

// Reaper reads tasks as they stand (every query of tasks).
type Reaper interface {
	// Reap returns tasks as they stand, with RUNNING tasks whose owner is gone interrupted,
	// and how many it interrupted.
	Reap(ctx context.Context, tasks []*task.Task) ([]*task.Task, int, error)
}

// PlanWatcher tells of changes of a plan's status (WaitPlan).
type PlanWatcher interface {
	// Watch returns a channel closed at the plan's next change of status, and stop, which
	// ends the watch (called when giving up, so that abandoned long polls do not pile up).
	Watch(planID string) (changed <-chan struct{}, stop func())
}

// Unlocker carries out an operator's unlock of a tenant (UnlockTenant).
type Unlocker interface {
	// Unlock removes a tenant's lease whoever holds it and fences its holder.
	Unlock(ctx context.Context, tenantID string) (lease.Unlocked, error)
}

// Secrets resolves the secrets stage templates read: infra/secrets.Dir.
type Secrets interface {
	// Secret returns the value of secret name.
	Secret(name string) (string, error)
}

// Transcripts reads what a task's stage attempts printed (the exec kind's stdout and stderr
// tails, secrets hidden), shown beside its ledger entries: infra/memrepo's and
// infra/redisrepo's TranscriptStore.
type Transcripts interface {
	// Transcripts returns every transcript kept of task taskID, by ledger entry (none: empty).
	Transcripts(ctx context.Context, taskID string) (map[task.AttemptKey]stage.Transcript, error)
	// LatestWithTranscripts returns the tenant's latest task (task.ErrNotFound: none), its
	// checkpoint (nil when it has none) and its transcripts, read together: on Redis two
	// round trips, where the task and then its transcripts take three.
	LatestWithTranscripts(ctx context.Context, tenantID string) (*task.Task, *checkpoint.Checkpoint, map[task.AttemptKey]stage.Transcript, error)
}
