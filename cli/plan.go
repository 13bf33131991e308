package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/wire"
)

func (a *invocation) planCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "List, show and control plans, and act on their tasks",
		Args:  groupArgs,
		RunE:  groupRun,
	}
	cmd.AddCommand(
		a.planListCmd(),
		a.planShowCmd(),
		a.planTasksCmd(),
		a.planSummaryCmd(),
		a.planBulkCmd(),
		a.planOpCmd("pause", "Pause a plan; running tasks pause at their next stage boundary", (*client.Client).PausePlan),
		a.planResumeCmd(),
		a.planOpCmd("cancel", "Cancel a plan and its unfinished tasks", (*client.Client).CancelPlan),
		a.planRetryCmd(),
		a.planDecisionCmd("approve", "Let a rolling plan go on: its next ring starts",
			`Approve a rolling plan's current ring: a ring awaiting approval, running, baking or checking
makes way for the next ring; a ring halted by its failure budget runs on, its budget waived;
one halted by its health check or its analysis makes way for the next ring. A canary plan's
wave: the tasks past it start (phase CANARY or AWAITING_APPROVAL becomes PROMOTED). A plan
without rings, or whose rollout cannot go on, is a 409 (exit 1).`),
		a.planDecisionCmd("reject", "Stop a rolling plan: tasks not started never start",
			`Reject a rolling plan at its current ring (halted, awaiting approval, running, baking or
checking): every task not started, of this ring and the later ones, is cancelled; running
tasks finish. A canary plan's wave: phase CANARY or AWAITING_APPROVAL becomes HALTED and the
tasks past the wave are cancelled without starting. A plan without rings, or already ended,
is a 409 (exit 1).

  --rollback   also roll back every task of the rejected ring that ran, as 'plan bulk
               rollback ID --ring R' would: each undoes the stages it completed, newest
               first, and ends ROLLED_BACK (or ROLLBACK_FAILED). The tenants the ring reached
               are put back; the plan's progress counts them (the answer is the plan). The
               ring's tasks still RUNNING roll back too: each run turns back at its next
               stage boundary, or as its stage ends. A plan without rings is then a 400 (exit 1):
               'plan bulk rollback' rolls its tasks back.`),
	)
	return cmd
}

func (a *invocation) planListCmd() *cobra.Command {
	var status, cursor string
	var limit int
	var selectors []string
	cmd := &cobra.Command{
		Use:   "list [--status S] [-l KEY=VALUE,...] [--limit N] [--cursor C]",
		Short: "List plans, newest first",
		Long: `List plans, newest first, one page at a time (--limit, default the server's 50). When
there are more, the table output ends with the --cursor of the next page on stderr; the JSON
output carries it as nextCursor.

-l/--label KEY=VALUE (repeated, or comma-separated) lists the plans that have every one of
these labels. A page by labels examines at most 5,000 plans: when few match, it may hold fewer
plans than --limit, or none, and still name a --cursor to go on from.`,
		Example: `  executor plan list
  executor plan list --status RUNNING
  executor plan list -l team=sre,env=prod -o wide
  executor plan list --limit 20 --cursor 01JD...`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := planStatusFlag(status)
			if err != nil {
				return err
			}
			labels, err := labelFlag(selectors)
			if err != nil {
				return err
			}
			if limit < 0 || limit > app.MaxListLimit {
				return usagef("invalid --limit %d: want 1 to %d", limit, app.MaxListLimit)
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			l, err := c.ListPlans(cmd.Context(), client.PlanQuery{Status: st, Labels: labels, Limit: limit, Cursor: cursor})
			if err != nil {
				return err
			}
			if err := a.print(l, planListTable(*l)); err != nil {
				return err
			}
			if !a.structured() && l.NextCursor != "" {
				fmt.Fprintf(a.stderr, "more plans: --cursor %s\n", l.NextCursor)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&status, "status", "", "only plans in this status ("+strings.Join(planStatusNames(), ", ")+")")
	f.StringSliceVarP(&selectors, "label", "l", nil, "only plans with these labels: KEY=VALUE, repeated or comma-separated (every one must match)")
	f.IntVar(&limit, "limit", 0, "at most this many plans (default: the server's page size)")
	f.StringVar(&cursor, "cursor", "", "the page after this cursor (nextCursor of the previous page)")
	return cmd
}

func (a *invocation) planShowCmd() *cobra.Command {
	var watch bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a plan, its progress and its summary",
		Long: `Show a plan and its progress (task counts per status), then its summary, counted on the
server whatever the plan's size (as 'plan summary' prints it): the tasks by current stage and
status, the failure classes with a sample tenant and message, the gates with WAITING tasks and
the RUNNING tasks longest at their stage. -o json prints the plan only (wire.Plan, without its
task ids: 'plan tasks' lists them, 'plan summary -o json' prints the summary).

--watch waits until the plan ends, redrawing a live progress line on a terminal, prints the
final plan (without the summary) and exits 1 unless it ended COMPLETED. It also stops when
nothing of the plan can progress without an operator (tasks WAITING at a gate, PAUSED or
INTERRUPTED, the plan PAUSED, a canary wave awaiting approval): it prints the plan, says what
is needed and exits 3. Ctrl-C exits 130. --timeout bounds the wait: once it passes it exits 124
naming the plan, which goes on.`,
		Example: `  executor plan show 01JD7X...
  executor plan show 01JD7X... --watch
  executor plan show 01JD7X... --watch --timeout 1h`,
		Args: exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkTimeout(cmd, timeout, "watch", watch); err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			if watch {
				return a.waitAndPrint(cmd, c, args[0], false, timeout)
			}
			p, err := c.Plan(cmd.Context(), args[0], 0)
			if err != nil {
				return err
			}
			if !a.tabular() {
				return a.print(p, nil)
			}
			s, err := c.Summary(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return a.print(p, planShowTable(*p, *s))
		},
	}
	cmd.Flags().BoolVar(&watch, "watch", false, "wait until the plan ends, showing live progress on a terminal")
	timeoutFlag(cmd, &timeout, "watch")
	return cmd
}

func (a *invocation) planOpCmd(name, short string, op func(*client.Client, context.Context, string) (*wire.Plan, error)) *cobra.Command {
	return &cobra.Command{
		Use:     name + " ID",
		Short:   short,
		Example: fmt.Sprintf("  executor plan %s 01JD7X...", name),
		Args:    exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return fetchAndPrint(a, func(c *client.Client) (*wire.Plan, error) {
				return op(c, cmd.Context(), args[0])
			}, planTable)
		},
	}
}

func (a *invocation) planResumeCmd() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "resume ID [--all]",
		Short: "Resume a paused plan and the tasks its pause paused",
		Long: `Resume a paused plan: its tasks start again, and the tasks its pause paused (those RUNNING
when it was paused) resume at their next stage. Tenants paused one by one ('executor pause
--tenant T', before or during the plan's pause) stay PAUSED: each was paused for a reason of
its own. --all resumes them too, also once the plan runs again (after a plain resume);
'executor resume --tenant T' resumes one.`,
		Example: `  executor plan resume 01JD7X...
  executor plan resume 01JD7X... --all`,
		Args: exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return fetchAndPrint(a, func(c *client.Client) (*wire.Plan, error) {
				return c.ResumePlan(cmd.Context(), args[0], all)
			}, planTable)
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "also resume the tenants paused one by one")
	return cmd
}

func planStatusNames() []string {
	out := make([]string, len(plan.Statuses))
	for i, s := range plan.Statuses {
		out[i] = string(s)
	}
	return out
}

// planStatusFlag checks a --status value (any case) against the plan statuses.
func planStatusFlag(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	s := plan.Status(strings.ToUpper(v))
	if !s.Valid() {
		return "", usagef("invalid --status %q: want one of %s", v, strings.Join(planStatusNames(), ", "))
	}
	return string(s), nil
}
