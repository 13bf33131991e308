package app

import (
	"context"
	"sync"
	"time"

	"github.com/executor-dev/executor/domain/audit"
	"github.com/executor-dev/executor/domain/availability"
	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// Deps are the Service's collaborators: the ports of ports.go, the store's repositories, and
// how the executor stands. server sets each port on what runs plans (Launcher … Unlocker) to
// its orchestrator.
type Deps struct {
	Creator     Creator
	Plans       plan.Repository
	Tasks       task.Repository
	Checkpoints checkpoint.Store
	Index       PlanIndex // the store's index of each plan's tasks (summaries, filters)
	Kinds       Kinds
	Holders     Holders
	Launcher    Launcher         // Submit
	PlanControl PlanControl      // the commands on plans
	TaskControl TaskControl      // the commands on tasks
	Reaper      Reaper           // the queries of tasks
	Watcher     PlanWatcher      // WaitPlan
	Unlocker    Unlocker         // UnlockTenant
	Events      EventSource      // GET /v1/events; nil: none (WatchEvents says ErrNoEvents)
	Members     Members          // GET /v1/executors; nil: none (Executors lists nothing)
	Clock       func() time.Time // default time.Now
	// Availability says where the executor stands (default: always up, alone). Not Reached:
	// new plans and the commands on what other executors may run answer ErrNotReady, the
	// queries of plans, tasks, tenants and checkpoints ErrNotReadyToRead. Shared and Degraded:
	// new plans answer ErrUnavailable, and the commands on what this executor cannot see
	// (cancels and pauses of tasks it does not run, retries, resumes, gate decisions and
	// plan-wide commands) ErrDegraded; shared, those commands write with task.MustShare (never
	// journaled, even after Redis lost its data), and answer ErrDegraded when their writes
	// find Redis away too. Draining: new plans, retries and resumes answer
	// errcode.ErrShuttingDown.
	Availability Availability
	// Transcripts reads what attempts printed, for the task queries (Task, TenantTask and
	// what answers with them). Nil: none is shown.
	Transcripts Transcripts
	// Secrets resolves the secrets stage templates read ({{secret "name"}}, serve's
	// --secrets-dir): a submission naming one it cannot resolve is refused, the field named;
	// the value itself is never read into a plan, a preview or an answer. Nil: none.
	Secrets Secrets
	// Settled returns a *task.ClaimsPausedError while the executors sharing the store write
	// back what they hold after it lost its data (it asks the store); the commands on what
	// other executors may run answer it meanwhile. Default: always settled.
	Settled func(ctx context.Context) error
	// Limits bound submissions; zero fields take the defaults.
	Limits Limits
	// Audit stores the record of every operator action (submissions, commands, decisions,
	// bulk actions, unlocks) before it is taken, and what came of it (audit.go). Nil: none
	// is kept.
	Audit audit.Log
	// DecidingRoles are the token roles that may decide at a gate or on a ring (auth's): an
	// approvers rule naming another is refused. Nil: any role is taken.
	DecidingRoles []string
	// Deliveries reads where the deliveries of the plans' notifications stand (GET
	// /v1/plans/{planId}/notifications). Nil: none shown.
	Deliveries DeliveryStates
	// ExecutorURL returns the base URL of this executor's HTTP API, which templates read as
	// .ExecutorURL when a submission is checked. Default: none (empty).
	ExecutorURL func() string
}

// Service implements the use cases. Its collaborators are its own (see Deps).
type Service struct {
	creator       Creator
	plans         plan.Repository
	tasks         task.Repository
	checkpoints   checkpoint.Store
	index         PlanIndex
	kinds         Kinds
	holders       Holders
	launcher      Launcher
	planControl   PlanControl
	taskControl   TaskControl
	reaper        Reaper
	watcher       PlanWatcher
	unlocker      Unlocker
	eventSource   EventSource
	members       Members
	transcripts   Transcripts
	audit         audit.Log
	deliveries    DeliveryStates
	decidingRoles []string
	clock         func() time.Time

	avail     Availability
	isSettled func(ctx context.Context) error // Deps.Settled
	secrets   Secrets
	limits    Limits
	selfURL   func() string // Deps.ExecutorURL

	submitMu sync.Mutex // a conflict check and the creation it allows happen as one step
}

// New returns a Service.
func New(d Deps) *Service {
	if d.Clock == nil {
		d.Clock = time.Now
	}
	if d.Availability == nil {
		d.Availability = availability.Func(availability.Up)
	}
	return &Service{
		creator: d.Creator, plans: d.Plans, tasks: d.Tasks, checkpoints: d.Checkpoints, index: d.Index,
		kinds: d.Kinds, holders: d.Holders,
		launcher: d.Launcher, planControl: d.PlanControl, taskControl: d.TaskControl,
		reaper: d.Reaper, watcher: d.Watcher, unlocker: d.Unlocker,
		eventSource: d.Events, members: d.Members, transcripts: d.Transcripts, audit: d.Audit, deliveries: d.Deliveries, decidingRoles: d.DecidingRoles, clock: d.Clock,
		avail: d.Availability, isSettled: d.Settled, secrets: d.Secrets, limits: d.Limits.withDefaults(), selfURL: d.ExecutorURL,
	}
}

// executorURL returns the base URL of this executor's HTTP API, or "" when it has none.
func (s *Service) executorURL() string {
	if s.selfURL == nil {
		return ""
	}
	return s.selfURL()
}

func (s *Service) now() time.Time { return s.clock().UTC() }
