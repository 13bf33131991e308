package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/executor-dev/executor/domain/availability"
	"github.com/executor-dev/executor/domain/errcode"

	"github.com/executor-dev/executor/domain/task"
)

// ErrDegraded: the executor cannot reach Redis where other executors share it (the `shared`
// topology), and the command would act on what it cannot
// see: a task another executor may be running (a cancel or pause of a task that does not run
// here: its run would go on), or work started from a copy that may be stale (a retry, a
// resume, a gate's decision, a plan-wide command). HTTP 503: the command takes effect through
// an executor that reaches Redis, or through this one once it does.
var ErrDegraded = errcode.New(errcode.Unavailable, "app: redis is unreachable from this executor, which cannot change what another executor may be running; "+
	"send the command to an executor that reaches Redis, or again once this one does")

// ErrNotReady: the executor has not reached Redis once since it started: it cannot tell which tenants other executors run, so it takes no new
// plan, and no command ErrDegraded refuses, until it has; nor does it answer queries
// (ErrNotReadyToRead). HTTP 503 with Retry-After (NotReadyRetryAfter).
var ErrNotReady = errcode.New(errcode.NotReady, "app: this executor has not reached Redis since it started and takes no new work until it has; "+
	"try again shortly, or send it to an executor that reaches Redis")

// ErrNotReadyToRead: a read of plans, tasks, tenants or checkpoints on an executor that has
// not reached Redis since it started: its memory holds none of them, and an answer from it would
// say that they do not exist. It matches ErrNotReady (HTTP 503 with Retry-After).
var ErrNotReadyToRead error = notReadyToRead{}

type notReadyToRead struct{}

func (notReadyToRead) Error() string {
	return "app: this executor has not reached Redis since it started and cannot see plans, tasks nor checkpoints until it has " +
		"(it would answer that they do not exist); try again shortly, or ask an executor that reaches Redis"
}

// Is makes ErrNotReadyToRead match ErrNotReady.
func (notReadyToRead) Is(target error) bool { return target == ErrNotReady }

// Code is ErrNotReady's.
func (notReadyToRead) Code() errcode.Code { return errcode.NotReady }

// NotReadyRetryAfter is the Retry-After of ErrNotReady: about how often the executor tries
// Redis again.
const NotReadyRetryAfter = 2 * time.Second

// Availability answers where the executor stands (server: from the store's monitor, the reach
// of Redis and the orchestrator's shutdown).
type Availability interface {
	Availability() availability.State
}

// notReady reports whether the executor has not reached Redis since it started (or Redis
// refuses what it needs).
func (s *Service) notReady() bool { return !s.avail.Availability().Reached }

// refuseRead returns ErrNotReadyToRead before Redis was reached: every query of plans, tasks,
// tenants and checkpoints starts with it.
func (s *Service) refuseRead() error {
	if s.notReady() {
		return ErrNotReadyToRead
	}
	return nil
}

// degraded reports whether the executor runs degraded where it must act only on what it runs:
// it shares its store with other executors and does not reach it now.
func (s *Service) degraded() bool {
	st := s.avail.Availability()
	return st.Shared && st.Degraded
}

// refuseDegraded returns ErrNotReady before Redis was reached, then ErrDegraded while
// degraded.
func (s *Service) refuseDegraded() error {
	if s.notReady() {
		return ErrNotReady
	}
	if s.degraded() {
		return ErrDegraded
	}
	return nil
}

// runningHere wraps a task command that stops or pauses a run: while degraded it takes
// effect only on a task this executor runs (it stops the run at once, and the write-back
// applies it to Redis's copy), else it answers ErrDegraded.
func (s *Service) runningHere(op func(context.Context, string) error) func(context.Context, string) error {
	return func(ctx context.Context, taskID string) error {
		if s.taskControl.Runs(taskID) {
			return op(ctx, taskID) // the run stops here at once; the write-back tells Redis
		}
		return s.shared(ctx, func(ctx context.Context) error { return op(ctx, taskID) })
	}
}

// plansWhileUp wraps a plan command: while degraded it answers ErrDegraded (the plan's tasks
// may run on other executors).
func (s *Service) plansWhileUp(op func(context.Context, string) error) func(context.Context, string) error {
	return func(ctx context.Context, planID string) error {
		return s.shared(ctx, func(ctx context.Context) error { return op(ctx, planID) })
	}
}

// shared runs op, a command on what other executors may be running, unless this executor
// cannot reach them (ErrNotReady, ErrDegraded). Where other executors share the store
// (Availability's Shared), op writes with task.MustShare: an outage op meets answers ErrDegraded and
// is not written on this executor alone, so an acknowledged command is one every executor sees
// (journaled for a write-back instead, a cancel could come after the run it meant to stop had
// completed elsewhere). A plan-wide command cut short so may have reached some of its tasks;
// sent again, it reaches the rest. Right after Redis lost its data, while the executors
// write back what they hold (Deps.Settled), it answers a *task.ClaimsPausedError: the copy op
// would act on may be a stale one another executor wrote back first, which a newer copy then
// replaces, and an acknowledged command with it.
func (s *Service) shared(ctx context.Context, op func(context.Context) error) error {
	if err := s.refuseDegraded(); err != nil {
		return err
	}
	if !s.avail.Availability().Shared {
		return op(ctx)
	}
	if err := s.settled(ctx); err != nil {
		return err
	}
	err := op(task.MustShare(ctx))
	if err != nil && s.degraded() {
		return errors.Join(ErrDegraded, err)
	}
	return err
}

// settledKey marks a context whose command was found settled once for all its tasks
// (settledOnce): a bulk command asks Redis once, not once per task.
type settledKey struct{}

// settledOnce checks Deps.Settled once for a command on many tasks (shared: the executors
// wrote back what they held after a loss of Redis's data) and marks ctx so that the command's
// tasks are not checked again.
func (s *Service) settledOnce(ctx context.Context) (context.Context, error) {
	if !s.avail.Availability().Shared {
		return ctx, nil
	}
	if err := s.settled(ctx); err != nil {
		return ctx, err
	}
	return context.WithValue(ctx, settledKey{}, true), nil
}

// settled returns, wrapped, Deps.Settled's *task.ClaimsPausedError while the executors write
// back what they hold after Redis lost its data.
func (s *Service) settled(ctx context.Context) error {
	if s.isSettled == nil || ctx.Value(settledKey{}) != nil {
		return nil
	}
	if err := s.isSettled(ctx); err != nil {
		return fmt.Errorf("app: commands on what other executors may run wait while the executors write back what they held when Redis lost its data: %w", err)
	}
	return nil
}
