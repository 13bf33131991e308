package cli

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/wire"
)

func (a *invocation) planRetryCmd() *cobra.Command {
	var statuses []string
	var fromCheckpoint bool
	cmd := &cobra.Command{
		Use:   "retry ID [--status FAILED,INTERRUPTED] [--from-checkpoint]",
		Short: "Retry a plan's FAILED and INTERRUPTED tasks (or --status)",
		Long: `Retry every task of the plan whose status is one of --status (FAILED, INTERRUPTED,
CANCELLED, PAUSED, ROLLED_BACK or ROLLBACK_FAILED; default FAILED and INTERRUPTED), as
'executor retry --tenant' does for one: its attempt goes up by one and the plan reopens if it had ended. A task that cannot be
retried (its tenant has a newer task, or it changed meanwhile) is skipped with the reason;
the others are retried regardless. The table lists every selected task: retried or skipped,
and why.

  --from-checkpoint   each task resumes at the stage after its last completed one.
  without it          each task restarts at stage 0: EVERY stage runs again.

As for 'retry --tenant', the CLI always sends the choice; the HTTP API's default when the
body omits it is to resume from the checkpoint. The tasks of a PAUSED plan start once the plan
is resumed: stderr says so, with the command.`,
		Example: `  executor plan retry 01JD7X... --from-checkpoint
  executor plan retry 01JD7X... --status FAILED,CANCELLED --from-checkpoint
  executor plan retry 01JD7X... -o json | jq '.skipped'`,
		Args: exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := retryStatusFlag(statuses)
			if err != nil {
				return err
			}
			var out wire.PlanRetry
			body := wire.PlanRetryBody{Status: st, FromCheckpoint: &fromCheckpoint}
			if err := a.call(cmd.Context(), http.MethodPost, "/v1/plans/"+url.PathEscape(args[0])+"/retry", body, &out); err != nil {
				return err
			}
			if err := a.print(&out, planRetryTable(out)); err != nil {
				return err
			}
			if len(out.Retried) > 0 {
				a.notePaused(out.Plan, "the retried tasks start")
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&statuses, "status", nil,
		"retry the tasks in these statuses, comma-separated ("+strings.Join(retryStatusNames(), ", ")+"; default FAILED,INTERRUPTED)")
	f.BoolVar(&fromCheckpoint, "from-checkpoint", false, "resume after each task's last completed stage (default: restart at stage 0)")
	return cmd
}

func retryStatusNames() []string {
	retryable := task.RetryableStatuses()
	out := make([]string, len(retryable))
	for i, s := range retryable {
		out[i] = string(s)
	}
	return out
}

// retryStatusFlag checks --status values (any case) against the statuses a task can be
// retried from.
func retryStatusFlag(values []string) ([]string, error) {
	var out []string
	for _, v := range values {
		s := task.Status(strings.ToUpper(strings.TrimSpace(v)))
		if !slices.Contains(task.RetryableStatuses(), s) {
			return nil, usagef("invalid --status %q: a task can be retried from %s", v, strings.Join(retryStatusNames(), ", "))
		}
		out = append(out, string(s))
	}
	return out, nil
}

// notePaused tells on stderr, after a retry, that p is PAUSED: what was retried (what, e.g.
// "the task starts") waits until the plan is resumed, and the command that resumes it.
// Nothing when p is not PAUSED.
func (a *invocation) notePaused(p wire.Plan, what string) {
	if plan.Status(p.Status) != plan.Paused {
		return
	}
	fmt.Fprintf(a.stderr, "plan %s is PAUSED: %s once it is resumed: executor plan resume %s\n", p.PlanID, what, p.PlanID)
}
