package task

import (
	"regexp"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/executor-dev/executor/domain/stage"
)

// Task is one tenant's run of a plan's stages.
type Task struct {
	id             string
	planID         string
	tenantID       string
	params         map[string]any
	stages         []stage.Spec
	status         Status
	pauseRequested bool
	planPause      bool // the pause (asked or honoured) is its plan's: the plan's resume resumes it
	attempt        int
	currentStage   int
	createdAt      time.Time
	startedAt      time.Time
	finishedAt     time.Time
	updatedAt      time.Time
	heartbeatAt    time.Time
	lastError      *Failure
	ledger         []Attempt
	fence          uint64
	executor       string   // the executor running (or that last ran) the task
	version        uint64   // of the stored state this copy derives from (Version)
	wait           *Wait    // set while WAITING
	verdict        *Verdict // the latest operator decision on a waiting stage
	// rollback: the task's runs undo the stages it completed, newest first, instead of
	// running the next one (RollingBack); currentStage then counts the stages still applied.
	rollback bool
	// undoRequested: an operator asked a RUNNING task to roll back; its run turns back at its
	// next stage boundary, or as its current stage ends (RollbackRequested).
	undoRequested bool
}

// New returns a PENDING task for tenantID in planID. stages is the plan's template (shared, not
// copied: specs are immutable once a plan is created).
func New(planID, tenantID string, params map[string]any, stages []stage.Spec, now time.Time) (*Task, error) {
	if planID == "" || !TenantIDPattern.MatchString(tenantID) {
		return nil, ErrInvalid
	}
	if len(stages) == 0 {
		return nil, ErrInvalid
	}
	now = now.UTC()
	return &Task{
		id:        ulid.Make().String(),
		planID:    planID,
		tenantID:  tenantID,
		params:    params,
		stages:    stages,
		status:    Pending,
		attempt:   1,
		createdAt: now,
		updatedAt: now,
	}, nil
}

// ID returns the task's ULID.
func (t *Task) ID() string { return t.id }

// PlanID returns the plan the task belongs to.
func (t *Task) PlanID() string { return t.planID }

// TenantID returns the tenant the task deploys.
func (t *Task) TenantID() string { return t.tenantID }

// Params returns the tenant's params (shared; do not modify).
func (t *Task) Params() map[string]any { return t.params }

// Stages returns the stages to run (shared; do not modify).
func (t *Task) Stages() []stage.Spec { return t.stages }

// Status returns the task's status.
func (t *Task) Status() Status { return t.status }

// PauseRequested reports whether the task will pause at its next stage boundary.
func (t *Task) PauseRequested() bool { return t.pauseRequested }

// PausedByPlan reports whether the task is PAUSED, or asked to pause, because its plan was
// paused (RequestPlanPause), not for its tenant alone: a plain resume of the plan resumes it,
// and leaves the others paused.
func (t *Task) PausedByPlan() bool {
	return t.planPause && (t.status == Paused || t.pauseRequested)
}

// Attempt returns the run number: 1 on the first run, +1 per retry.
func (t *Task) Attempt() int { return t.attempt }

// CurrentStage returns the index of the next stage to run (len(Stages) once all ran): the
// number of stages completed and still applied. A task rolling back undoes stage
// CurrentStage()-1 next.
func (t *Task) CurrentStage() int { return t.currentStage }

// CreatedAt returns when the task was created.
func (t *Task) CreatedAt() time.Time { return t.createdAt }

// StartedAt returns when the current run started (zero before the first start).
func (t *Task) StartedAt() time.Time { return t.startedAt }

// FinishedAt returns when the task last ended (zero while it has not).
func (t *Task) FinishedAt() time.Time { return t.finishedAt }

// UpdatedAt returns when the task last changed.
func (t *Task) UpdatedAt() time.Time { return t.updatedAt }

// HeartbeatAt returns when the run owning the task last proved alive: its start, each of its
// writes, and its periodic heartbeats. A RUNNING task whose heartbeat is older than the lease
// TTL and whose lease is gone has lost its owner.
func (t *Task) HeartbeatAt() time.Time { return t.heartbeatAt }

// LastError returns the failure that last stopped the task, or nil.
func (t *Task) LastError() *Failure {
	if t.lastError == nil {
		return nil
	}
	f := *t.lastError
	return &f
}

// Ledger returns a copy of the attempt ledger.
func (t *Task) Ledger() []Attempt { return append([]Attempt(nil), t.ledger...) }

// LedgerLen returns the number of attempts in the ledger.
func (t *Task) LedgerLen() int { return len(t.ledger) }

// LedgerFrom returns a copy of the ledger's attempts from index n on (none when n is past
// the end). The ledger only grows, so attempts before n are the ones seen before.
func (t *Task) LedgerFrom(n int) []Attempt {
	return append([]Attempt(nil), t.ledger[min(max(n, 0), len(t.ledger)):]...)
}

// Wait returns why a WAITING task waits, or nil.
func (t *Task) Wait() *Wait {
	if t.wait == nil {
		return nil
	}
	w := *t.wait
	return &w
}

// Verdict returns the latest operator decision on a waiting stage, or nil.
func (t *Task) Verdict() *Verdict {
	if t.verdict == nil {
		return nil
	}
	v := *t.verdict
	return &v
}

// Decision returns the operator's decision on the stage the task is at, in its current run,
// or nil: a decision taken in an earlier run, or on another stage, does not count.
func (t *Task) Decision() *stage.Decision {
	v := t.verdict
	if v == nil || v.StageIndex != t.currentStage || v.Run != t.attempt {
		return nil
	}
	d := v.Decision
	return &d
}

// RollingBack reports whether the task's runs undo its completed stages (a rollback, started
// by Rollback or TurnBack) rather than run the next one. It stays so once ROLLED_BACK or
// ROLLBACK_FAILED, until a retry of a ROLLED_BACK task runs it forward again.
func (t *Task) RollingBack() bool { return t.rollback }

// RollbackRequested reports whether an operator asked the task, RUNNING forward, to roll back:
// its run turns back (TurnBack) at its next stage boundary, or as its current stage ends,
// completed or failed. The request outlives a pause, a hand-back and an interruption (the
// next run honours it), not a cancel nor the task's end.
func (t *Task) RollbackRequested() bool { return t.undoRequested }

// Fence returns the fence epoch of the run that owns the task.
func (t *Task) Fence() uint64 { return t.fence }

// Executor returns the name of the executor whose run started the task last (StartOn), or "".
func (t *Task) Executor() string { return t.executor }

// Version returns the version of the stored task this copy derives from: 0 at creation, +1 per
// write the store accepted (a fence bump included). A store accepts a write only from a copy
// at its stored version (compare-and-set): whoever wrote since must be read again first.
func (t *Task) Version() uint64 { return t.version }

// Stored records that a store accepted this copy's changes as version v. Only stores call it.
func (t *Task) Stored(v uint64) { t.version = v }

// TenantIDPattern is what a tenant id must match (docs/design.md §7): safe inside a Redis key.
var TenantIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
