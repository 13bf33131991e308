package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/wire"
)

// bulkAction is one action of `executor plan bulk`: what it does and which task statuses it
// can change (the --status it takes), per docs/api.md.
type bulkAction struct {
	name     string
	short    string
	long     string
	statuses []string // the statuses it can change
	defaults string   // what it acts on without --status
}

var bulkActions = []bulkAction{
	{
		name: client.BulkApprove, short: "Approve the gate of every WAITING task matching the filters",
		long: `Approve the gate (an approval stage) of every task of the plan matching the filters that
is WAITING at one: each runs on past it, as 'executor approve --tenant' would. --comment is
kept with each task's decision.`,
		statuses: []string{string(task.Waiting)}, defaults: string(task.Waiting),
	},
	{
		name: client.BulkReject, short: "Reject the gate of every WAITING task matching the filters",
		long: `Reject the gate (an approval stage) of every task of the plan matching the filters that is
WAITING at one: each stage fails permanently and the task ends FAILED, as 'executor reject
--tenant' would. --comment is kept with each task's decision.`,
		statuses: []string{string(task.Waiting)}, defaults: string(task.Waiting),
	},
	{
		name: client.BulkRetry, short: "Retry every FAILED or INTERRUPTED task matching the filters",
		long: `Retry every task of the plan matching the filters, as 'executor retry --tenant' would: its
attempt goes up by one and the plan reopens if it had ended.

  --from-checkpoint   each task resumes at the stage after its last completed one.
  without it          each task restarts at stage 0: EVERY stage runs again.

As for 'retry --tenant' and 'plan retry', the CLI always sends the choice; the HTTP API's
default when the body omits it is to resume from the checkpoint.`,
		statuses: statusNames(task.RetryableStatuses()), defaults: strings.Join(statusNames(app.DefaultRetryStatuses), ","),
	},
	{
		name: client.BulkCancel, short: "Cancel every unfinished task matching the filters",
		long: `Cancel every task of the plan matching the filters that has not ended, as 'executor cancel
--tenant' would: a running task's stage is cancelled.`,
		statuses: statusNames(task.CancellableStatuses()), defaults: "all of them",
	},
	{
		name: client.BulkRollback, short: "Roll back every task matching the filters that ran and stopped",
		long: `Roll back every task of the plan matching the filters that ran and stopped (COMPLETED,
FAILED, CANCELLED, PAUSED, INTERRUPTED, or ROLLBACK_FAILED: a rollback that stopped goes on), as
'executor rollback --tenant' would: each task's new run undoes the stages it completed, newest
first, with each stage's undo, and ends ROLLED_BACK (or ROLLBACK_FAILED at an undo that
failed). --ring names the ring whose tenants to put back: 'plan bulk rollback ID --ring 1'.`,
		statuses: statusNames(task.UndoableStatuses()), defaults: "all of them",
	},
	{
		name: client.BulkSkip, short: "Skip every task matching the filters (default: the FAILED ones)",
		long: `Skip every task of the plan matching the filters, as 'executor skip --tenant' would: each
ends SKIPPED, not deployed by your decision and no failure. A FAILED plan whose failed tenants
are all skipped completes, "with exceptions" ('plan show' counts them). The stages a task
completed stay applied; 'plan bulk rollback --status SKIPPED' undoes them.`,
		statuses: statusNames(task.SkippableStatuses()), defaults: string(task.Failed),
	},
}

// statusNames returns the task statuses as strings.
func statusNames(statuses []task.Status) []string {
	out := make([]string, len(statuses))
	for i, s := range statuses {
		out[i] = string(s)
	}
	return out
}

func (a *invocation) planBulkCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bulk",
		Short: "Approve, reject, retry, cancel or roll back tasks matching filters",
		Long: `Act on every task of a plan matching filters in one request (POST
/v1/plans/{planId}/tasks/{action}): 45 gates to approve, or 750 tasks failed with one class
to retry, are one command. The filters are those of 'plan tasks' (--status, --stage, --class,
--tenant), and --ring for a plan rolled out in rings (a wave's name or a ring's index: that
ring's tasks); without any, the action applies to every task it can change. Each matching task is
acted on as the tenant's own command would; one that cannot take the action when it is
reached (it moved on meanwhile, its tenant has a newer task) is skipped with the reason, the
others regardless, and the command exits 0. Check what a filter selects first with
'executor plan tasks ID' and the same filters (but --ring, which only the actions take).`,
		Args: groupArgs,
		RunE: groupRun,
	}
	for _, ba := range bulkActions {
		cmd.AddCommand(a.bulkActionCmd(ba))
	}
	return cmd
}

func (a *invocation) bulkActionCmd(ba bulkAction) *cobra.Command {
	var filter taskFilter
	var comment, ring string
	var fromCheckpoint bool
	decision := ba.name == client.BulkApprove || ba.name == client.BulkReject
	use := ba.name + " ID [--status S,...] [--stage S] [--class C] [--tenant PREFIX] [--ring R]"
	switch {
	case decision:
		use += " [--comment TEXT]"
	case ba.name == client.BulkRetry:
		use += " [--from-checkpoint]"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: ba.short,
		Long: ba.long + fmt.Sprintf(`

--status takes %s (default %s).

The table prints how many tasks matched, how many took the action and how many were skipped,
then each skipped task (the API lists the first 1,000) and why; the command exits 0 however
many were skipped. -o json prints wire.BulkResult.`, strings.Join(ba.statuses, ", "), ba.defaults),
		Example: bulkExample(ba.name),
		Args:    exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := filter.checkStatuses(ba.statuses, "plan bulk "+ba.name)
			if err != nil {
				return err
			}
			body := wire.BulkTasksBody{Status: st, Stage: filter.stage, Class: filter.class, Tenant: filter.tenant, Ring: ring, Comment: comment}
			if ba.name == client.BulkRetry {
				body.FromCheckpoint = &fromCheckpoint
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			out, err := c.BulkTasks(cmd.Context(), args[0], ba.name, body)
			if err != nil {
				return err
			}
			if err := a.print(out, bulkTable(*out)); err != nil {
				return err
			}
			if what := bulkStarts[ba.name]; what != "" && out.Applied > 0 {
				if p, err := c.Plan(cmd.Context(), args[0], 0); err == nil { // the action is done: a failed read only loses the hint
					a.notePaused(*p, what)
				}
			}
			return nil
		},
	}
	filter.addFlags(cmd, "act on the tasks in these statuses, comma-separated ("+strings.Join(ba.statuses, ", ")+"; default "+ba.defaults+")")
	cmd.Flags().StringVar(&ring, "ring", "", "only the tasks of this ring of a plan rolled out in rings: its wave's name or its index (0-based)")
	switch {
	case decision:
		cmd.Flags().StringVar(&comment, "comment", "", "why: kept with each task's decision (at most 1000 bytes)")
	case ba.name == client.BulkRetry:
		cmd.Flags().BoolVar(&fromCheckpoint, "from-checkpoint", false, "resume after each task's last completed stage (default: restart at stage 0)")
	}
	return cmd
}

// bulkStarts says, for the actions that start tasks, what waits when the plan is PAUSED.
var bulkStarts = map[string]string{
	client.BulkRetry:    "the retried tasks start",
	client.BulkRollback: "the rollbacks start",
}

func bulkExample(action string) string {
	switch action {
	case client.BulkApprove:
		return `  executor plan bulk approve 01JD7X... --stage approve-prod --comment "CHG-4711"
  executor plan bulk approve 01JD7X... --stage approve-prod --tenant eu-`
	case client.BulkReject:
		return `  executor plan bulk reject 01JD7X... --stage approve-prod --tenant us- --comment "error rate"`
	case client.BulkRetry:
		return `  executor plan bulk retry 01JD7X... --class timeout --from-checkpoint
  executor plan bulk retry 01JD7X... --status INTERRUPTED --stage 2 --from-checkpoint -o json`
	case client.BulkRollback:
		return `  executor plan bulk rollback 01JD7X... --ring canary
  executor plan bulk rollback 01JD7X... --ring 1 --status COMPLETED --tenant eu-`
	case client.BulkSkip:
		return `  executor plan bulk skip 01JD7X...
  executor plan bulk skip 01JD7X... --status FAILED,INTERRUPTED --tenant eu-`
	default:
		return `  executor plan bulk cancel 01JD7X... --tenant eu-
  executor plan bulk cancel 01JD7X... --status WAITING --stage approve-prod`
	}
}

// bulkTable is what an action on a filter did: the counts, then each skipped task listed
// and why, and how many more were skipped than listed.
func bulkTable(r wire.BulkResult) func(io.Writer) {
	return func(w io.Writer) {
		fmt.Fprintf(w, "%s: matched %d, applied %d, skipped %d\n", r.Action, r.Matched, r.Applied, r.SkippedCount)
		if len(r.Skipped) == 0 {
			return
		}
		fmt.Fprintln(w, "TENANT\tTASK ID\tRESULT\tREASON")
		for _, t := range r.Skipped {
			row(w, t.TenantID, t.TaskID, "skipped", truncate(t.Reason, maxCell))
		}
		if more := r.SkippedCount - len(r.Skipped); more > 0 {
			fmt.Fprintf(w, "and %d more skipped, not listed (the answer lists the first %d)\n", more, len(r.Skipped))
		}
	}
}
