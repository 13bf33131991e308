package orchestrator

import (
	"context"
	"strings"
	"time"

	"github.com/executor-dev/executor/domain/availability"
	"github.com/executor-dev/executor/domain/lease"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// Kinds resolves a stage kind to its handler.
type Kinds interface {
	Handler(kind string) (stage.Handler, bool)
}

// Availability answers where the executor stands with its store.
type Availability interface {
	Availability() availability.State
}

// ParamsAcceptor is a stage handler that may refuse a stage's params on this executor while
// another executor would run them (the exec kind's allow-list): the dispatch loop claims no
// task of a plan whose params a handler does not accept.
type ParamsAcceptor interface {
	// Accepts reports whether this executor may run a stage of params, as submitted.
	Accepts(params map[string]any) bool
}

// Transcripts keeps what stage attempts printed (the exec kind's stdout and stderr tails)
// beside their ledger entries: infra/memrepo's and infra/redisrepo's TranscriptStore.
// Diagnostics: a run writes them best effort, and never waits long for them.
type Transcripts interface {
	// KeepTranscript keeps t as what attempt key of task taskID printed, in place of what was
	// kept for that key; beyond task.TranscriptsKept of the task's, the oldest go.
	KeepTranscript(ctx context.Context, taskID string, key task.AttemptKey, t stage.Transcript) error
}

// Locker hands out tenant leases.
type Locker interface {
	// Acquire takes tenantID's lease for owner, or fails with lease.ErrHeld.
	Acquire(ctx context.Context, tenantID, owner string) (lease.Lease, error)
	// Holder reports who holds tenantID's lease, if anyone.
	Holder(ctx context.Context, tenantID string) (lease.Holder, bool, error)
	// ForceRelease removes tenantID's lease whoever holds it (an operator's unlock) and
	// returns the holder it removed; ok is false when nobody held it.
	ForceRelease(ctx context.Context, tenantID string) (h lease.Holder, ok bool, err error)
}

// Cluster tells which executors sharing the store are alive.
type Cluster interface {
	// AliveSince reports whether the executor name is alive and has been the same process
	// since at least since.
	AliveSince(ctx context.Context, name string, since time.Time) (bool, error)
	// Steady reports whether this executor's own liveness has held without a lapse for d.
	Steady(ctx context.Context, d time.Duration) (bool, error)
}

// Scheduler starts SCHEDULED plans at their startAt, exactly once across executors, by calling
// StartScheduled (infra/schedule: a timer heap in memory, a Redis ZSET shared by executors).
type Scheduler interface {
	// Schedule records that planID starts at at.
	Schedule(ctx context.Context, planID string, at time.Time) error
	// Unschedule forgets planID; it reports whether the entry was still there.
	Unschedule(ctx context.Context, planID string) (bool, error)
}

// leaseOwner is the owner a run records in its tenant's lease: the task it runs and the
// executor running it, "<planId>:<taskId>@<executor>".
func leaseOwner(executor, planID, taskID string) string {
	return planID + ":" + taskID + "@" + executor
}

// ownsTask reports whether a lease owner is a run of task taskID of planID, on any executor
// (an owner written before executors had names ends after the task id).
func ownsTask(owner, planID, taskID string) bool {
	rest, ok := strings.CutPrefix(owner, planID+":"+taskID)
	return ok && (rest == "" || rest[0] == '@')
}
