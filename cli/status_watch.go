package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/wire"
)

// taskAnswer is one poll of a tenant's wait: its latest task, and, when the task is PENDING
// in a plan at rest (PAUSED, a ring awaiting approval, ...), the plan and why.
type taskAnswer struct {
	task *wire.Task
	plan *wire.Plan
	rest *rest
}

// done reports whether the wait is over: the task is at rest (ended, WAITING, PAUSED,
// INTERRUPTED), or cannot start until an operator acts on its plan.
func (t taskAnswer) done() bool {
	return task.Status(t.task.Status).AtRest() || t.rest != nil
}

// watchTenant waits until the tenant's latest task is at rest (status --watch), redrawing a
// status line on a terminal meanwhile, prints it as status does, and ends as the task does
// (tenantOutcome). timeout (0: none) bounds the wait: ExitTimeout once it passed; Ctrl-C:
// ExitInterrupted. The task goes on either way.
func (a *invocation) watchTenant(cmd *cobra.Command, tenant string, timeout time.Duration) error {
	c, err := a.client()
	if err != nil {
		return err
	}
	parent := cmd.Context()
	ctx, cancel := waitContext(parent, timeout)
	defer cancel()
	ans, err := a.waitTenant(ctx, c, tenant)
	follow := "executor status --tenant " + tenant + " --watch"
	switch {
	case err == nil:
	case timedOut(parent, ctx):
		return tenantTimeout(parent, c, tenant, timeout, follow)
	case parent.Err() != nil:
		return &exitError{code: ExitInterrupted, msg: fmt.Sprintf("interrupted: tenant %s's task goes on: %s", tenant, follow)}
	default:
		return err
	}
	if err := a.print(ans.task, taskStatusTable(*ans.task)); err != nil {
		return err
	}
	if ans.rest != nil {
		return needsOperator(parent, c, *ans.plan, ans.rest)
	}
	return tenantOutcome(*ans.task)
}

// waitTenant polls the tenant's latest task until it is at rest, or PENDING in a plan at
// rest; on a terminal (liveOutput) with a status line redrawn.
func (a *invocation) waitTenant(ctx context.Context, c *client.Client, tenant string) (taskAnswer, error) {
	poll := func(ctx context.Context, wait time.Duration) polled[taskAnswer] {
		var res polled[taskAnswer]
		res.v.task, res.err = c.WaitTenantTask(ctx, tenant, wait)
		if res.err == nil && task.Status(res.v.task.Status) == task.Pending {
			res.v.plan, res.v.rest, res.err = planAtRest(ctx, c, res.v.task.PlanID)
		}
		res.done = res.err == nil && res.v.done()
		return res
	}
	if f := a.liveOutput(); f != nil {
		return followLive(ctx, f, func(ctx context.Context, first bool) polled[taskAnswer] {
			if first {
				return poll(ctx, 0)
			}
			return poll(ctx, livePoll)
		}, func(t taskAnswer, width int) string { return taskProgressLine(*t.task, width) })
	}
	for wait := time.Duration(0); ; wait = quietPoll { // the first answer at once: it may be at rest already
		res := poll(ctx, wait)
		if res.err != nil || res.done {
			return res.v, res.err
		}
	}
}

// planAtRest reads the plan and returns it with its rest when it is at rest (settled), nil
// rest otherwise: a PENDING task of such a plan starts only once an operator acts on it.
func planAtRest(ctx context.Context, c *client.Client, planID string) (*wire.Plan, *rest, error) {
	p, err := c.Plan(ctx, planID, 0)
	if err != nil {
		return nil, nil, err
	}
	return settled(ctx, c, p)
}

// tenantOutcome is how status --watch ends once the task is at rest: nil when it COMPLETED;
// ExitNeedsOperator when it is WAITING, PAUSED or INTERRUPTED, with the command that lets it
// go on; ExitFailure when it ended otherwise.
func tenantOutcome(t wire.Task) error {
	st, tenant := task.Status(t.Status), t.TenantID
	what := fmt.Sprintf("tenant %s's task %s", tenant, t.TaskID)
	var hint string
	switch st {
	case task.Completed:
		return nil
	case task.Waiting:
		hint = fmt.Sprintf("decide its gate: executor approve --tenant %s (or executor reject --tenant %s)", tenant, tenant)
	case task.Paused:
		hint = "resume it: executor resume --tenant " + tenant
	case task.Interrupted:
		hint = fmt.Sprintf("run it on: executor retry --tenant %s --from-checkpoint", tenant)
	default:
		return &exitError{code: ExitFailure, msg: fmt.Sprintf("%s ended %s", what, t.Status), kind: kindEnded}
	}
	return &exitError{
		code:  ExitNeedsOperator,
		msg:   fmt.Sprintf("%s is %s at %s: it cannot go on without an operator", what, t.Status, taskStage(t)),
		hints: []string{hint},
	}
}

// tenantTimeout is the failure of status --watch whose timeout d passed: where the tenant's
// task stands (read once more, briefly: left out when it cannot be read) and how to follow it.
func tenantTimeout(ctx context.Context, c *client.Client, tenant string, d time.Duration, follow string) error {
	what := "tenant " + tenant + "'s task"
	ctx, cancel := context.WithTimeout(ctx, statusRead)
	defer cancel()
	if t, err := c.TenantTask(ctx, tenant); err == nil {
		what = fmt.Sprintf("tenant %s's task %s (%s at %s)", tenant, t.TaskID, t.Status, taskStage(*t))
	}
	return timeoutError(d, what, follow)
}

// taskProgressLine renders a task's progress as one status line that fits in width columns
// (width <= 0: no limit), e.g.
//
//	RUNNING    [##########----------]  50%  2/4 stages  deploy (3/4)  attempt 1
//
// The bar and percentage count the stages behind it (for a task rolling back, those still
// applied).
func taskProgressLine(t wire.Task, width int) string {
	n := len(t.Stages)
	done := min(max(t.CurrentStage, 0), n)
	pct, filled := 0, 0
	if n > 0 {
		pct, filled = done*100/n, done*barWidth/n
	}
	line := fmt.Sprintf("%-10s [%s%s] %3d%%  %d/%d stages  %s  attempt %d", t.Status,
		strings.Repeat("#", filled), strings.Repeat("-", barWidth-filled), pct, done, n, taskStage(t), t.Attempt)
	if width > 0 {
		if r := []rune(line); len(r) > width-1 {
			line = strings.TrimRight(string(r[:max(width-1, 0)]), " ")
		}
	}
	return line
}
