package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/executor-dev/executor/api"
	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
)

// Canary phases of api.Canary.Phase that hold the tasks past the wave back.
const (
	phaseCanary           = string(plan.PhaseCanary)
	phaseAwaitingApproval = string(plan.PhaseAwaitingApproval)
)

// tenantsShown bounds the tenants a hint names.
const tenantsShown = 3

// rest says why a plan that has not ended cannot progress without an operator. Its tasks at
// rest (WAITING, PAUSED, INTERRUPTED) are counted in the plan's progress.
type rest struct {
	paused   bool // the plan is PAUSED
	approval bool // its canary wave completed and awaits an operator's approval
	canary   bool // its canary wave cannot complete: every canary task left is at rest
}

// atRest returns why nothing of p can progress without an operator, or nil when something
// can (or p ended): no task runs, and none can start, because the plan is PAUSED, its canary
// wave awaits approval, the canary tasks left are at rest, or no task is PENDING (those left
// are WAITING at a gate, PAUSED or INTERRUPTED). A SCHEDULED or PENDING plan starts by itself.
func atRest(ctx context.Context, c *client.Client, p api.Plan) (*rest, error) {
	st := plan.Status(p.Status)
	if st.Terminal() || p.Progress[string(task.Running)] > 0 {
		return nil, nil
	}
	phase := ""
	if p.Canary != nil {
		phase = p.Canary.Phase
	}
	switch {
	case st == plan.Paused:
		return &rest{paused: true}, nil
	case st != plan.Running:
		return nil, nil
	case phase == phaseAwaitingApproval:
		return &rest{approval: true}, nil
	case phase == phaseCanary:
		can, err := canaryCanProgress(ctx, c, p)
		if err != nil || can {
			return nil, err
		}
		return &rest{canary: true}, nil
	}
	pr := p.Progress
	if pr[string(task.Pending)] > 0 || pr[string(task.Waiting)]+pr[string(task.Paused)]+pr[string(task.Interrupted)] == 0 {
		return nil, nil // a task can start, or every task ended and the plan is settling
	}
	return &rest{}, nil
}

// canaryCanProgress reports whether a task of p's canary wave (its first tenants) is PENDING
// or RUNNING.
func canaryCanProgress(ctx context.Context, c *client.Client, p api.Plan) (bool, error) {
	q := client.TaskQuery{Limit: min(p.Canary.Tenants, client.TaskPageSize)}
	for seen := 0; seen < p.Canary.Tenants; {
		page, err := c.PlanTasksPage(ctx, p.PlanID, q)
		if err != nil {
			return false, err
		}
		for _, t := range page.Tasks[:min(len(page.Tasks), p.Canary.Tenants-seen)] {
			if s := task.Status(t.Status); s == task.Pending || s == task.Running {
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
func needsOperator(ctx context.Context, c *client.Client, p api.Plan, r *rest) error {
	id := p.PlanID
	var hints []string
	if r.paused {
		why := ""
		if p.Reason != "" {
			why = " (" + p.Reason + ")"
		}
		hints = append(hints, fmt.Sprintf("the plan is PAUSED%s: executor plan resume %s", why, id))
	}
	if r.approval {
		hints = append(hints, fmt.Sprintf("the canary wave completed and awaits approval: executor plan approve %s (or executor plan reject %s)", id, id))
	}
	if n := p.Progress[string(task.Interrupted)]; n > 0 {
		hints = append(hints, fmt.Sprintf("%s INTERRUPTED%s: executor plan retry %s --status INTERRUPTED --from-checkpoint (or executor retry --tenant T --from-checkpoint for one)",
			tasksN(n), tenantsOf(ctx, c, id, task.Interrupted), id))
	}
	if p.Progress[string(task.Waiting)] > 0 {
		hints = append(hints, gateHints(ctx, c, p)...)
	}
	if n := p.Progress[string(task.Paused)]; n > 0 && !r.paused {
		hints = append(hints, fmt.Sprintf("%s PAUSED%s: executor resume --tenant T, for each", tasksN(n), tenantsOf(ctx, c, id, task.Paused)))
	}
	if r.canary {
		hints = append(hints, "the tasks past the canary wave start only once every canary task completed")
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
func gateHints(ctx context.Context, c *client.Client, p api.Plan) []string {
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
