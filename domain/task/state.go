package task

import (
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/executor-dev/executor/domain/stage"
)

// State is a task's persisted form. Load turns it back into a Task, re-checking invariants.
type State struct {
	ID             string
	PlanID         string
	TenantID       string
	Params         map[string]any
	Stages         []stage.Spec
	Status         Status
	PauseRequested bool
	PlanPause      bool // see Task.PausedByPlan
	Attempt        int
	CurrentStage   int
	CreatedAt      time.Time
	StartedAt      time.Time
	FinishedAt     time.Time
	UpdatedAt      time.Time
	HeartbeatAt    time.Time
	LastError      *Failure
	Ledger         []Attempt
	Fence          uint64
	Version        uint64   // see Task.Version
	Executor       string   // see Task.Executor
	Wait           *Wait    // set exactly when Status is WAITING
	Verdict        *Verdict // the latest decision on a waiting stage, if any
	Rollback       bool     // see Task.RollingBack
	// RollbackRequested: see Task.RollbackRequested.
	RollbackRequested bool
}

// State returns the task's persisted form. Slices and the last error are copies.
func (t *Task) State() State {
	return State{
		ID: t.id, PlanID: t.planID, TenantID: t.tenantID, Params: t.params, Stages: t.stages,
		Status: t.status, PauseRequested: t.pauseRequested, PlanPause: t.planPause, Attempt: t.attempt,
		CurrentStage: t.currentStage, CreatedAt: t.createdAt, StartedAt: t.startedAt,
		FinishedAt: t.finishedAt, UpdatedAt: t.updatedAt, HeartbeatAt: t.heartbeatAt, LastError: t.LastError(),
		Ledger: t.Ledger(), Fence: t.fence, Version: t.version, Executor: t.executor, Wait: t.Wait(), Verdict: t.Verdict(),
		Rollback: t.rollback, RollbackRequested: t.undoRequested,
	}
}

// Load rebuilds a task from persisted state, refusing state that breaks an invariant.
func Load(s State) (*Task, error) {
	bad := func(format string, args ...any) (*Task, error) {
		return nil, fmt.Errorf("%w: %s: %s", ErrInvalid, s.ID, fmt.Sprintf(format, args...))
	}
	if _, err := ulid.ParseStrict(s.ID); err != nil {
		return bad("id is not a ULID")
	}
	switch {
	case s.PlanID == "" || s.TenantID == "":
		return bad("plan and tenant are required")
	case !s.Status.Valid():
		return bad("unknown status %q", s.Status)
	case len(s.Stages) == 0:
		return bad("no stages")
	case s.CurrentStage < 0 || s.CurrentStage > len(s.Stages):
		return bad("current stage %d out of range", s.CurrentStage)
	case s.Status == Completed && s.CurrentStage != len(s.Stages):
		return bad("completed before its last stage")
	case s.Status == Completed && s.Rollback:
		return bad("completed while rolling back")
	case (s.Status == RolledBack || s.Status == RollbackFailed) && !s.Rollback:
		return bad("%s without a rollback", s.Status)
	case s.Status == RolledBack && s.CurrentStage != 0:
		return bad("rolled back with %d stages still applied", s.CurrentStage)
	case s.RollbackRequested && (s.Rollback || s.Status.Terminal()):
		return bad("a rollback requested of a %s task rolling back %t", s.Status, s.Rollback)
	case s.Attempt < 1:
		return bad("attempt %d < 1", s.Attempt)
	case s.Status.Terminal() && s.FinishedAt.IsZero():
		return bad("%s without finishedAt", s.Status)
	case (s.Status == Waiting) != (s.Wait != nil):
		return bad("%s with wait %v", s.Status, s.Wait != nil)
	case s.Wait != nil && s.Wait.StageIndex != s.CurrentStage:
		return bad("waits at stage %d, is at stage %d", s.Wait.StageIndex, s.CurrentStage)
	}
	for n, a := range s.Ledger {
		switch {
		case !a.Outcome.Valid():
			return bad("attempt %d: unknown outcome %q", n, a.Outcome)
		case a.StageIndex < 0 || a.StageIndex >= len(s.Stages):
			return bad("attempt %d: stage %d out of range", n, a.StageIndex)
		case a.Run < 1:
			return bad("attempt %d: run %d < 1", n, a.Run)
		case a.Attempt < 1:
			return bad("attempt %d: stage attempt %d < 1", n, a.Attempt)
		case n > 0 && a.Run < s.Ledger[n-1].Run:
			return bad("attempt %d: run %d after run %d (the ledger only grows)", n, a.Run, s.Ledger[n-1].Run)
		}
	}
	var lastErr *Failure
	if s.LastError != nil {
		f := *s.LastError
		lastErr = &f
	}
	return &Task{
		id: s.ID, planID: s.PlanID, tenantID: s.TenantID, params: s.Params, stages: s.Stages,
		status: s.Status, pauseRequested: s.PauseRequested, planPause: s.PlanPause, attempt: s.Attempt,
		currentStage: s.CurrentStage, createdAt: s.CreatedAt, startedAt: s.StartedAt,
		finishedAt: s.FinishedAt, updatedAt: s.UpdatedAt, heartbeatAt: s.HeartbeatAt, lastError: lastErr,
		ledger: append([]Attempt(nil), s.Ledger...), fence: s.Fence, version: s.Version, executor: s.Executor,
		wait: copyOf(s.Wait), verdict: copyOf(s.Verdict), rollback: s.Rollback, undoRequested: s.RollbackRequested,
	}, nil
}

// Clone returns an independent copy of the task without re-checking it: a store keeps one and
// hands out clones, so no caller's transitions change the stored task. The attempts are
// shared, capped at their number (the ledger only appends, so an append on either side moves
// to a new array and never writes into the other's); the stage template and params are
// immutable and shared, as State shares them.
func (t *Task) Clone() *Task {
	c := *t
	c.ledger = t.ledger[:len(t.ledger):len(t.ledger)]
	if t.lastError != nil {
		f := *t.lastError
		c.lastError = &f
	}
	c.wait, c.verdict = copyOf(t.wait), copyOf(t.verdict)
	return &c
}

func copyOf[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}
