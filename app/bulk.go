package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/executor-dev/executor/domain/audit"
	"github.com/executor-dev/executor/domain/errcode"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// BulkAction is what BulkTasks does to each task matching its filter.
type BulkAction string

// The actions on a filter, each what the tenant's own command does.
const (
	BulkApprove BulkAction = "approve" // pass the gate a WAITING task waits at
	BulkReject  BulkAction = "reject"  // fail a WAITING task at its gate
	BulkRetry   BulkAction = "retry"   // run an ended or stopped task again
	BulkCancel  BulkAction = "cancel"  // cancel a task that has not ended
	// BulkRollback rolls a task back: undoes the stages it completed, newest first.
	BulkRollback BulkAction = "rollback"
	// BulkSkip skips every matching task that does not run (task.Task.Skip): by default the
	// FAILED ones, so that a plan whose failures an operator accepts completes, with exceptions.
	BulkSkip BulkAction = "skip"
)

// BulkActions lists every action on a filter.
var BulkActions = []BulkAction{BulkApprove, BulkReject, BulkRetry, BulkCancel, BulkRollback, BulkSkip}

// bulkStatuses are the statuses each action can change, and the statuses it takes when the
// filter names none.
var bulkStatuses = map[BulkAction]struct{ allowed, defaults []task.Status }{
	BulkApprove: {[]task.Status{task.Waiting}, []task.Status{task.Waiting}},
	BulkReject:  {[]task.Status{task.Waiting}, []task.Status{task.Waiting}},
	BulkRetry:   {task.RetryableStatuses(), DefaultRetryStatuses},
	BulkCancel:  {task.CancellableStatuses(), task.CancellableStatuses()},
	// Every task that ran and stopped: what an SRE means by "roll ring 2 back".
	BulkRollback: {task.UndoableStatuses(), task.UndoableStatuses()},
	BulkSkip:     {task.SkippableStatuses(), []task.Status{task.Failed}},
}

// MaxBulkSkippedListed bounds the skipped tasks a BulkResult lists (SkippedCount counts
// them all).
const MaxBulkSkippedListed = 1000

// bulkWorkers bounds the tasks acted on at once.
const bulkWorkers = 8

// BulkRequest is an action on every task of a plan matching a filter.
type BulkRequest struct {
	Action BulkAction
	// Filter selects the tasks (Statuses named "status[i]" in errors); its Statuses must be
	// ones the action can change, and default to those it takes.
	Filter TaskFilter
	// Comment is recorded with each decision (approve, reject).
	Comment string
	// FromCheckpoint (retry) resumes each task after its last completed stage.
	FromCheckpoint bool
}

// BulkResult is what BulkTasks did.
type BulkResult struct {
	Matched int // tasks matching the filter when the plan's index was read
	Applied int // tasks that took the action
	// Skipped are the matching tasks that did not take it, with the reason, in the plan's
	// order: the first MaxBulkSkippedListed; SkippedCount counts them all.
	Skipped      []TaskRef
	SkippedCount int
}

// BulkTasks acts on every task of a plan matching req's filter, as the tenant's own command
// does for one (every write a compare-and-set, wherever the task runs). A task that matched
// when the index was read but cannot take the action when it is reached (it moved on, its
// tenant has a newer task) is skipped with the reason; the others take it regardless. It
// answers errcode.ErrShuttingDown, ErrNotReady or ErrDegraded before acting on any, and stops at
// errcode.ErrShuttingDown or when ctx ends.
func (s *Service) BulkTasks(ctx context.Context, planID string, req BulkRequest) (BulkResult, error) {
	rule, ok := bulkStatuses[req.Action]
	if !ok {
		return BulkResult{}, invalid("action", fmt.Sprintf("%q is not one of %v", req.Action, BulkActions))
	}
	if err := checkULID("planId", planID); err != nil {
		return BulkResult{}, err
	}
	if err := req.Filter.checkStatuses("status[%d]", rule.allowed); err != nil {
		return BulkResult{}, err
	}
	if len(req.Filter.Statuses) == 0 {
		req.Filter.Statuses = rule.defaults
	}
	if err := checkComment(req.Comment); err != nil {
		return BulkResult{}, err
	}
	if err := errors.Join(s.refuseWork(), s.refuseDegraded()); err != nil {
		return BulkResult{}, err
	}
	ctx, err := s.settledOnce(ctx)
	if err != nil {
		return BulkResult{}, err
	}
	p, err := s.plans.Plan(ctx, planID)
	if err != nil {
		return BulkResult{}, err
	}
	rf, err := req.Filter.resolve(p)
	if err != nil {
		return BulkResult{}, err
	}
	var out BulkResult
	a := action{name: "bulk-" + string(req.Action), planID: planID, request: req.auditAttrs()}
	err = s.audited(ctx, a, func(ctx context.Context) ([]audit.Attr, error) {
		matched, _, err := s.matching(ctx, p, rf)
		if err != nil {
			return nil, err
		}
		applied, skipped, err := s.actOn(ctx, matched, s.bulkOp(ctx, req))
		if err != nil {
			return nil, err
		}
		out = BulkResult{Matched: len(matched), Applied: len(applied), SkippedCount: len(skipped)}
		out.Skipped = skipped[:min(len(skipped), MaxBulkSkippedListed)]
		return []audit.Attr{attrInt("matched", out.Matched), attrInt("applied", out.Applied),
			attrInt("skipped", out.SkippedCount)}, nil
	})
	return out, err
}

// auditAttrs is what a bulk action's audit record keeps of its request: the filter as
// resolved (the statuses given or defaulted), and the comment or fromCheckpoint it passes on.
func (req BulkRequest) auditAttrs() []audit.Attr {
	out := req.Filter.auditAttrs()
	if req.Comment != "" {
		out = append(out, attr("comment", req.Comment))
	}
	if req.Action == BulkRetry {
		out = append(out, attr("fromCheckpoint", strconv.FormatBool(req.FromCheckpoint)))
	}
	return out
}

// bulkOp is the command req.Action runs on one task.
func (s *Service) bulkOp(ctx context.Context, req BulkRequest) func(context.Context, string) error {
	switch req.Action {
	case BulkApprove, BulkReject:
		d := s.decision(ctx, req.Action == BulkApprove, req.Comment)
		return func(ctx context.Context, id string) error { return s.taskControl.DecideTask(ctx, id, d) }
	case BulkRetry:
		return func(ctx context.Context, id string) error {
			return s.taskControl.RetryTask(ctx, id, req.FromCheckpoint)
		}
	case BulkRollback:
		return s.taskControl.RollbackTask
	case BulkSkip:
		return s.taskControl.SkipTask
	default:
		return s.taskControl.CancelTask
	}
}

// matching returns the tasks of p that match rf as the index holds them, in the plan's
// order, and the tasks the store no longer holds.
func (s *Service) matching(ctx context.Context, p *plan.Plan, rf rowFilter) ([]TaskRef, []MissingTask, error) {
	rows, missing, _, err := s.rowsOf(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	var out []TaskRef
	for _, id := range p.TaskIDs() {
		if r, ok := rows[id]; ok && rf.match(r) {
			out = append(out, TaskRef{TaskID: id, TenantID: r.TenantID})
		}
	}
	return out, missing, nil
}

// actOn runs op on each task of refs, bulkWorkers at a time, and returns those it succeeded
// on and those it did not (with the error as the reason), both in refs' order. It stops, with
// the error, at errcode.ErrShuttingDown or when ctx ends.
func (s *Service) actOn(ctx context.Context, refs []TaskRef, op func(context.Context, string) error) ([]TaskRef, []TaskRef, error) {
	reasons := make([]string, len(refs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(bulkWorkers)
	var mu sync.Mutex
	for i, ref := range refs {
		g.Go(func() error {
			err := s.startingWork(gctx, func(ctx context.Context) error { return op(ctx, ref.TaskID) })
			switch {
			case err == nil:
				return nil
			case errors.Is(err, errcode.ErrShuttingDown) || gctx.Err() != nil:
				return err
			}
			mu.Lock()
			reasons[i] = err.Error()
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	var done, skipped []TaskRef
	for i, ref := range refs {
		if reasons[i] == "" {
			done = append(done, ref)
		} else {
			ref.Reason = reasons[i]
			skipped = append(skipped, ref)
		}
	}
	return done, slices.Clip(skipped), nil
}
