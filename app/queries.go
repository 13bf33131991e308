package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/executor-dev/executor/domain/checkpoint"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// MaxWait bounds a long poll on a plan or a task.
const MaxWait = 5 * time.Minute

// MaxListLimit bounds one page of plans or tasks.
const MaxListLimit = 1000

// tasksOf reads tasks as they stand (RUNNING tasks whose owner is gone read INTERRUPTED) and
// says how many of them it interrupted. A task the store no longer holds is left out of the
// tasks and listed in missing (its Index is its place in ids).
func (s *Service) tasksOf(ctx context.Context, ids []string) ([]*task.Task, []MissingTask, int, error) {
	tasks, missing, err := readPresent(ctx, ids, s.tasks.ByIDs)
	if err != nil {
		return nil, nil, 0, err
	}
	if len(missing) > 0 {
		tasks = slices.DeleteFunc(tasks, func(t *task.Task) bool { return t == nil })
	}
	tasks, reaped, err := s.reaper.Reap(ctx, tasks)
	if err != nil {
		return nil, nil, 0, err
	}
	return tasks, missing, reaped, nil
}

// view counts p's tasks. p is read before its tasks, so a terminal plan's counts are final.
// Tasks the store no longer holds are counted in the total and listed as missing: this reads
// every task's status (the plan's index, Summary, cannot tell a task Redis lost).
func (s *Service) view(ctx context.Context, p *plan.Plan) (PlanView, error) {
	statuses, missing, p, err := s.statusesOf(ctx, p)
	if err != nil {
		return PlanView{}, err
	}
	pr := progressOf(statuses)
	pr.Missing = missing
	return PlanView{Plan: p, Progress: pr}, nil
}

// statusesOf reads the statuses of p's tasks as they stand, in the plan's order ("" for a task
// the store no longer holds, listed in missing). It reads the tasks' statuses, and whole
// tasks only for the RUNNING ones (those may have lost their owner, and read INTERRUPTED): a
// 100,000-tenant plan is not decoded to be counted. It returns p read again when reaping may
// have settled it.
func (s *Service) statusesOf(ctx context.Context, p *plan.Plan) ([]task.Status, []MissingTask, *plan.Plan, error) {
	ids := p.TaskIDs()
	statuses, missing, err := readPresent(ctx, ids, s.tasks.Statuses)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("app: tasks of plan %s: %w", p.ID(), err)
	}
	var running []string
	at := map[string]int{}
	for i, st := range statuses {
		if st == task.Running {
			running, at[ids[i]] = append(running, ids[i]), i
		}
	}
	if len(running) == 0 {
		return statuses, missing, p, nil
	}
	tasks, gone, reaped, err := s.tasksOf(ctx, running)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("app: tasks of plan %s: %w", p.ID(), err)
	}
	for _, t := range tasks {
		statuses[at[t.ID()]] = t.Status()
	}
	for _, m := range gone { // lost since its status was read
		i := at[m.TaskID]
		statuses[i] = ""
		missing = append(missing, MissingTask{TaskID: m.TaskID, Index: i})
	}
	sortMissing(missing)
	if reaped > 0 {
		if p, err = s.plans.Plan(ctx, p.ID()); err != nil { // reaping may have settled it
			return nil, nil, nil, err
		}
	}
	return statuses, missing, p, nil
}

// Plan returns a plan and its progress.
func (s *Service) Plan(ctx context.Context, planID string) (PlanView, error) {
	if err := checkULID("planId", planID); err != nil {
		return PlanView{}, err
	}
	if err := s.refuseRead(); err != nil {
		return PlanView{}, err
	}
	p, err := s.plans.Plan(ctx, planID)
	if err != nil {
		return PlanView{}, err
	}
	return s.view(ctx, p)
}

// waitRecheck is how often WaitPlan reads the plan again without a change notice: another
// executor may have ended it, and the notice that says so is best effort.
const waitRecheck = 2 * time.Second

// WaitPlan returns the plan once it is terminal, or as it is after wait (at most MaxWait).
// Its tasks are read (and reaped) once at the start and once at the end: between, each change
// of the plan's status (and every waitRecheck) costs one read of the plan, not of its
// thousands of tasks.
func (s *Service) WaitPlan(ctx context.Context, planID string, wait time.Duration) (PlanView, error) {
	if err := checkWait(wait); err != nil {
		return PlanView{}, err
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	recheck := time.NewTicker(waitRecheck)
	defer recheck.Stop()
	changed, stop := s.watcher.Watch(planID)
	v, err := s.Plan(ctx, planID)
	if err != nil || v.Plan.Status().Terminal() {
		stop()
		return v, err
	}
	for {
		select {
		case <-changed:
		case <-recheck.C:
			stop()
		case <-deadline.C:
			stop()
			return s.Plan(ctx, planID)
		case <-ctx.Done():
			stop()
			return v, ctx.Err()
		}
		changed, stop = s.watcher.Watch(planID)
		p, err := s.plans.Plan(ctx, planID)
		if err != nil {
			stop()
			return PlanView{}, err
		}
		if p.Status().Terminal() {
			stop()
			return s.view(ctx, p)
		}
	}
}

// ListPlans returns plans newest first: those in f's status with f's labels. A page by labels
// examines at most MaxPlanScan plans; when it stops there, f.Resume names the last one.
func (s *Service) ListPlans(ctx context.Context, f plan.Filter) ([]PlanView, error) {
	if f.Status != "" && !f.Status.Valid() {
		return nil, invalid("status", fmt.Sprintf("unknown plan status %q", f.Status))
	}
	if err := checkLabelSelector(f.Labels, s.limits.MaxLabels); err != nil {
		return nil, err
	}
	if f.Before != "" {
		if err := checkULID("cursor", f.Before); err != nil {
			return nil, err
		}
	}
	if f.Limit <= 0 || f.Limit > MaxListLimit {
		f.Limit = min(max(f.Limit, 50), MaxListLimit)
	}
	if err := s.refuseRead(); err != nil {
		return nil, err
	}
	plans, err := s.plans.List(ctx, scanBound(f))
	if err != nil {
		return nil, err
	}
	out := make([]PlanView, len(plans))
	for i, p := range plans {
		if out[i], err = s.countedView(ctx, p); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// countedView counts p's tasks from the plan's index (Summary), not from every task: a list
// of plans of 100,000 tenants each reads a few counters per plan. The tasks the store no
// longer holds are counted in the total only (GET of the plan lists them).
func (s *Service) countedView(ctx context.Context, p *plan.Plan) (PlanView, error) {
	sum, p, err := s.summaryOf(ctx, p)
	if err != nil {
		return PlanView{}, err
	}
	return PlanView{Plan: p, Progress: Progress{Total: len(p.TaskIDs()), Counts: sum.Statuses}}, nil
}

// Task returns a task with its checkpoint, lease and transcripts.
func (s *Service) Task(ctx context.Context, taskID string) (TaskView, error) {
	if err := checkULID("taskId", taskID); err != nil {
		return TaskView{}, err
	}
	if err := s.refuseRead(); err != nil {
		return TaskView{}, err
	}
	t, err := s.tasks.Task(ctx, taskID)
	if err != nil {
		return TaskView{}, err
	}
	if t, err = s.asItStands(ctx, t); err != nil {
		return TaskView{}, err
	}
	return s.taskView(ctx, t)
}

// TenantTask returns the tenant's latest task with its checkpoint, lease and transcripts.
func (s *Service) TenantTask(ctx context.Context, tenantID string) (TaskView, error) {
	if err := checkTenantID("tenantId", tenantID); err != nil {
		return TaskView{}, err
	}
	if err := s.refuseRead(); err != nil {
		return TaskView{}, err
	}
	// The task with its checkpoint and transcripts (read together: on Redis, one or two round
	// trips, not three), and the lease beside them, on a goroutine of its own: one round trip,
	// so the query's wait is the task's round trips, with no goroutine to start or to wake in
	// between (the tail of a query during a rollout is its waits for a scheduler busy with the
	// runs).
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type holder struct {
		lease LeaseView
		err   error
	}
	lease := make(chan holder, 1)
	go func() {
		h, held, err := s.holders.Holder(ctx, tenantID)
		lease <- holder{LeaseView{Held: held, Holder: h}, err}
	}()
	var v TaskView
	t, cp, out, err := s.latestWithTranscripts(ctx, tenantID)
	if err == nil {
		t, err = s.asItStands(ctx, t)
	}
	if err != nil {
		cancel() // the lease's read is of no use now
		<-lease
		return TaskView{}, err
	}
	v.Task, v.Checkpoint, v.Transcripts = t, cp, out
	h := <-lease
	if h.err != nil {
		return TaskView{}, h.err
	}
	v.Lease = h.lease
	return v, nil
}

// latestWithTranscripts reads the tenant's latest task, its checkpoint and its transcripts
// (none without a transcript store).
func (s *Service) latestWithTranscripts(ctx context.Context, tenantID string) (*task.Task, *checkpoint.Checkpoint, map[task.AttemptKey]stage.Transcript, error) {
	if s.transcripts == nil {
		t, cp, err := s.tasks.LatestWithCheckpoint(ctx, tenantID)
		return t, cp, nil, err
	}
	return s.transcripts.LatestWithTranscripts(ctx, tenantID)
}

// TenantCheckpoint returns the checkpoint of the tenant's latest task, or
// checkpoint.ErrNotFound when it has none.
func (s *Service) TenantCheckpoint(ctx context.Context, tenantID string) (*checkpoint.Checkpoint, error) {
	t, err := s.latest(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	return s.checkpoints.Checkpoint(ctx, t.ID())
}

func (s *Service) latest(ctx context.Context, tenantID string) (*task.Task, error) {
	if err := checkTenantID("tenantId", tenantID); err != nil {
		return nil, err
	}
	if err := s.refuseRead(); err != nil {
		return nil, err
	}
	t, err := s.tasks.Latest(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	return s.asItStands(ctx, t)
}

// asItStands reads one task as it stands (see tasksOf).
func (s *Service) asItStands(ctx context.Context, t *task.Task) (*task.Task, error) {
	tasks, _, err := s.reaper.Reap(ctx, []*task.Task{t})
	if err != nil {
		return nil, err
	}
	return tasks[0], nil
}

func (s *Service) taskView(ctx context.Context, t *task.Task) (TaskView, error) {
	v := TaskView{Task: t}
	// The checkpoint, the lease and the transcripts are read at once: one wait for the store.
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		cp, err := s.checkpoints.Checkpoint(gctx, t.ID())
		switch {
		case err == nil:
			v.Checkpoint = cp
		case !errors.Is(err, checkpoint.ErrNotFound):
			return err
		}
		return nil
	})
	g.Go(func() error {
		h, held, err := s.holders.Holder(gctx, t.TenantID())
		v.Lease = LeaseView{Held: held, Holder: h}
		return err
	})
	g.Go(func() (err error) {
		v.Transcripts, err = s.transcriptsOf(gctx, t.ID())
		return err
	})
	return v, g.Wait()
}

// transcriptsOf reads what task taskID's attempts printed; none without Deps.Transcripts.
func (s *Service) transcriptsOf(ctx context.Context, taskID string) (map[task.AttemptKey]stage.Transcript, error) {
	if s.transcripts == nil {
		return nil, nil
	}
	out, err := s.transcripts.Transcripts(ctx, taskID)
	if err != nil {
		return nil, fmt.Errorf("app: transcripts of task %s: %w", taskID, err)
	}
	return out, nil
}
