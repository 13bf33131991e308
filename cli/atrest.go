package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/wire"
)

// States of a rolling plan's current ring (wire.RingView.State) that need an operator.
const (
	ringAwaitingApproval = "awaiting_approval"
	ringHalted           = "halted"
	ringRunning          = "running"
)

// tenantsShown bounds the tenants a hint names.
const tenantsShown = 3

// rest says why a plan that has not ended cannot progress without an operator. Its tasks at
// rest (WAITING, PAUSED, INTERRUPTED) are counted in the plan's progress.
type rest struct {
	paused   bool   // the plan is PAUSED
	approval bool   // its current ring completed and awaits an operator's approval
	halted   string // its current ring halted (why): approve goes on, reject cancels the rest
	ring     bool   // its current ring cannot complete: every task of it left is at rest
}

// atRest returns why nothing of p can progress without an operator, or nil when something
// can (or p ended): no task runs, and none can start, because the plan is PAUSED, its current
// ring awaits approval or halted, the ring's tasks left are at rest, or no task is PENDING
// (those left are WAITING at a gate, PAUSED or INTERRUPTED). A SCHEDULED or PENDING plan
// starts by itself; a ring baking or being checked goes on by itself.
func atRest(ctx context.Context, c *client.Client, p wire.Plan) (*rest, error) {
	st := plan.Status(p.Status)
	if st.Terminal() || p.Progress[string(task.Running)] > 0 {
		return nil, nil
	}
	switch {
	case st == plan.Paused:
		return &rest{paused: true}, nil
	case st != plan.Running:
		return nil, nil
	case p.Rings != nil:
		switch r := p.Rings; r.Waves[r.Current].State {
		case ringAwaitingApproval:
			return &rest{approval: true}, nil
		case ringHalted:
			why := "halted"
			if r.Halted != nil {
				why = r.Halted.Reason
			}
			return &rest{halted: why}, nil
		case ringRunning:
			if r.Current == len(r.Waves)-1 {
				break // the last ring: the plan's own counts say
			}
			from, to := ringBounds(r)
			can, err := ringCanProgress(ctx, c, p, from, to)
			if err != nil || can {
				return nil, err
			}
			return &rest{ring: true}, nil
		default:
			return nil, nil
		}
	}
	pr := p.Progress
	if pr[string(task.Pending)] > 0 || pr[string(task.Waiting)]+pr[string(task.Paused)]+pr[string(task.Interrupted)] == 0 {
		return nil, nil // a task can start, or every task ended and the plan is settling
	}
	return &rest{}, nil
}

// ringBounds returns the positions, in the plan's task order (ring order), of the current
// ring's tasks.
func ringBounds(r *wire.Rings) (from, to int) {
	for k := range r.Current {
		from += r.Waves[k].Tenants
	}
	return from, from + r.Waves[r.Current].Tenants
}

// ringCanProgress reports whether a task at positions from … to-1 of p's tasks (the current
// ring) is PENDING or RUNNING.
func ringCanProgress(ctx context.Context, c *client.Client, p wire.Plan, from, to int) (bool, error) {
	q := client.TaskQuery{Limit: min(to, client.TaskPageSize)}
	for seen := 0; seen < to; {
		page, err := c.PlanTasksPage(ctx, p.PlanID, q)
		if err != nil {
			return false, err
		}
		for i, t := range page.Tasks[:min(len(page.Tasks), to-seen)] {
			if s := task.Status(t.Status); seen+i >= from && (s == task.Pending || s == task.Running) {
				return true, nil
			}
		}
		seen += len(page.Tasks)
		if page.NextCursor == "" {
			break
		}
		q.Cursor = page.NextCursor
	}
	return false, nil
}

// needsOperator is the failure of a wait that ended with p at rest: what an operator may do,
// with the commands, and ExitNeedsOperator.
func needsOperator(ctx context.Context, c *client.Client, p wire.Plan, r *rest) error {
	id := p.PlanID
	var hints []string
	if r.paused {
		why := ""
		if p.Reason != "" {
			why = " (" + p.Reason + ")"
		}
		hints = append(hints, fmt.Sprintf("the plan is PAUSED%s: executor plan resume %s", why, id))
		if p.Progress[string(task.Paused)] > 0 {
			hints = append(hints, fmt.Sprintf("tenants paused one by one stay PAUSED after it: executor plan resume %s --all resumes them too", id))
		}
	}
	if r.approval {
		what := "the current ring"
		if p.Canary != nil {
			what = "the canary wave"
		}
		hints = append(hints, fmt.Sprintf("%s completed and awaits approval: executor plan approve %s (or executor plan reject %s)", what, id, id))
	}
	if r.halted != "" {
		hints = append(hints, fmt.Sprintf("the rollout halted (%s): executor plan approve %s goes on, executor plan reject %s cancels the rest (--rollback also rolls back the ring's tasks that ran)", r.halted, id, id))
	}
	if n := p.Progress[string(task.Interrupted)]; n > 0 {
		hints = append(hints, fmt.Sprintf("%s INTERRUPTED%s: executor plan retry %s --status INTERRUPTED --from-checkpoint (or executor retry --tenant T --from-checkpoint for one)",
			tasksN(n), tenantsOf(ctx, c, id, task.Interrupted), id))
	}
	if p.Progress[string(task.Waiting)] > 0 {
		hints = append(hints, gateHints(ctx, c, p)...)
	}
	if n := p.Progress[string(task.Paused)]; n > 0 && !r.paused {
		hints = append(hints, pausedHint(ctx, c, id, n))
	}
	switch {
	case r.ring && p.Canary != nil:
		hints = append(hints, "the tasks past the canary wave start only once every canary task completed")
	case r.ring:
		hints = append(hints, "the next ring starts only once every task of the current ring completed (or failed within its budget)")
	}
	return &exitError{
		code:  ExitNeedsOperator,
		msg:   fmt.Sprintf("plan %s cannot progress without an operator (%s %s)", id, p.Status, strings.Join(progressCounts(p.Progress), " ")),
		hints: hints,
	}
}

// gateHints says, for every gate the plan's WAITING tasks wait at, how many wait there, the
// first few, and how to decide: the tenant's own command for one task, a bulk action on the
// gate's stage for more. The gates and their counts are the plan's summary's, whatever the
// plan's size.
func gateHints(ctx context.Context, c *client.Client, p wire.Plan) []string {
	generic := fmt.Sprintf("%s WAITING at a gate: executor plan bulk approve %s --status WAITING (or executor plan bulk reject %s --status WAITING)",
		tasksN(p.Progress[string(task.Waiting)]), p.PlanID, p.PlanID)
	s, err := c.Summary(ctx, p.PlanID)
	if err != nil || len(s.Gates) == 0 {
		return []string{generic}
	}
	var out []string
	for _, g := range s.Gates {
		q := client.TaskQuery{Status: string(task.Waiting), Stage: strconv.Itoa(g.StageIndex), Limit: tenantsShown}
		var ids []string
		if page, err := c.PlanTasksPage(ctx, p.PlanID, q); err == nil {
			for _, t := range page.Tasks {
				ids = append(ids, t.TenantID)
			}
		}
		if g.Waiting == 1 && len(ids) == 1 {
			out = append(out, fmt.Sprintf("1 task WAITING at gate %s (%s): executor approve --tenant %s (or executor reject --tenant %s)",
				g.Stage, ids[0], ids[0], ids[0]))
			continue
		}
		who := ""
		if len(ids) > 0 {
			who = tenantList(ids, g.Waiting)
		}
		stage := shellWord(g.Stage)
		out = append(out, fmt.Sprintf("%s WAITING at gate %s%s: executor plan bulk approve %s --stage %s (or executor plan bulk reject %s --stage %s)",
			tasksN(g.Waiting), g.Stage, who, p.PlanID, stage, p.PlanID, stage))
	}
	return out
}

// shellWord is s as one word of a shell command line: as it is when it holds only letters,
// digits and ._-/:@%+=, else single-quoted.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/:@%+=", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// tenantsOf is " (t1, t2, t3, …)": the first tenants of the plan's tasks in status st; empty
// when they cannot be read.
func tenantsOf(ctx context.Context, c *client.Client, planID string, st task.Status) string {
	page, err := c.PlanTasksPage(ctx, planID, client.TaskQuery{Status: string(st), Limit: tenantsShown})
	if err != nil || len(page.Tasks) == 0 {
		return ""
	}
	ids := make([]string, len(page.Tasks))
	for i, t := range page.Tasks {
		ids[i] = t.TenantID
	}
	return tenantList(ids, page.Total)
}

// tenantList is " (a, b, c, …)": the first tenantsShown of ids, of total.
func tenantList(ids []string, total int) string {
	shown := ids[:min(len(ids), tenantsShown)]
	s := strings.Join(shown, ", ")
	if total > len(shown) {
		s += ", …"
	}
	return " (" + s + ")"
}

// tasksN is "1 task" or "n tasks".
func tasksN(n int) string {
	if n == 1 {
		return "1 task"
	}
	return fmt.Sprintf("%d tasks", n)
}

// pausedHint is what to do about a plan's n PAUSED tasks (its pause resumed, or it was not
// paused): resume the tenant (named when it is one), or every one at once.
func pausedHint(ctx context.Context, c *client.Client, planID string, n int) string {
	all := "executor plan resume " + planID + " --all"
	if n == 1 {
		if page, err := c.PlanTasksPage(ctx, planID, client.TaskQuery{Status: string(task.Paused), Limit: 1}); err == nil && len(page.Tasks) == 1 {
			tn := page.Tasks[0].TenantID
			return fmt.Sprintf("1 task PAUSED (%s): executor resume --tenant %s (or %s)", tn, tn, all)
		}
	}
	return fmt.Sprintf("%s PAUSED%s: executor resume --tenant T for each, or %s", tasksN(n), tenantsOf(ctx, c, planID, task.Paused), all)
}
