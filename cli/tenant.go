package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/wire"
)

func (a *invocation) statusCmd() *cobra.Command {
	var tenant string
	var watch bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "status --tenant T [--watch [--timeout D]]",
		Short: "Show a tenant's latest task with its lease and checkpoint",
		Long: `Show a tenant's latest task with its lease and checkpoint, then what the last attempt of
each stage printed (an exec stage's stdout and stderr tails, secrets hidden; the last 20
lines of each here, the whole tails, 4 KiB each, with -o json or 'executor task show').

--watch waits until the task is at rest (ended, WAITING, PAUSED or INTERRUPTED), redrawing a
status line on a terminal, then prints it: exit 0 when it COMPLETED, 3 when it needs an
operator (WAITING, PAUSED, INTERRUPTED, or PENDING in a plan that cannot go on without one:
saying what to run), 1 when it ended otherwise. --timeout bounds the wait (exit 124); Ctrl-C
exits 130. The task goes on either way.`,
		Example: `  executor status --tenant tenant-001
  executor status --tenant tenant-001 --watch --timeout 10m
  executor status --tenant tenant-001 -o json | jq .lastError
  executor status --tenant tenant-001 -o json | jq -r '.attempts[-1].stderr'`,
		Args:    noArgs,
		PreRunE: requireFlags("tenant"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkTimeout(cmd, timeout, "watch", watch); err != nil {
				return err
			}
			if watch {
				return a.watchTenant(cmd, tenant, timeout)
			}
			return fetchAndPrint(a, func(c *client.Client) (*wire.Task, error) {
				return c.TenantTask(cmd.Context(), tenant)
			}, taskStatusTable)
		},
	}
	tenantFlag(cmd, &tenant)
	cmd.Flags().BoolVar(&watch, "watch", false, "wait until the task is at rest, showing live progress on a terminal")
	timeoutFlag(cmd, &timeout, "watch")
	return cmd
}

func (a *invocation) checkpointCmd() *cobra.Command {
	var tenant string
	cmd := &cobra.Command{
		Use:   "checkpoint --tenant T",
		Short: "Show the checkpoint of a tenant's latest task (exit 1 if none)",
		Long: `Show the checkpoint of a tenant's latest task: the last completed stage, the completed
stages and the names of their outputs (-o json shows the outputs). A task that has not
completed a stage has no checkpoint: that is a 404 and exit status 1.`,
		Example: `  executor checkpoint --tenant tenant-001
  executor checkpoint --tenant tenant-001 -o json`,
		Args:    noArgs,
		PreRunE: requireFlags("tenant"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return fetchAndPrint(a, func(c *client.Client) (*wire.Checkpoint, error) {
				return c.TenantCheckpoint(cmd.Context(), tenant)
			}, checkpointTable)
		},
	}
	tenantFlag(cmd, &tenant)
	return cmd
}

func (a *invocation) retryCmd() *cobra.Command {
	var tenant string
	var fromCheckpoint bool
	cmd := &cobra.Command{
		Use:   "retry --tenant T [--from-checkpoint]",
		Short: "Retry a tenant's stopped, failed or rolled-back task",
		Long: `Retry the tenant's latest task (FAILED, CANCELLED, PAUSED, INTERRUPTED, ROLLED_BACK,
ROLLBACK_FAILED or SKIPPED); its attempt goes up by one and it runs again under its plan, which
reopens if it had ended.

  --from-checkpoint   resume at the stage after the last completed one (stages that already
                      completed do not run again).
  without it          restart at stage 0: EVERY stage runs again, including the completed ones.

A ROLLED_BACK task runs forward again (from stage 0: nothing is applied). A task whose rollback
stopped (ROLLBACK_FAILED, or cancelled, paused or interrupted while rolling back) goes on
rolling back from the stages still applied, with or without --from-checkpoint, as
'executor rollback --tenant T' does.

The CLI always sends the choice explicitly; note that the HTTP API's default when the body
omits it is to resume from the checkpoint. A task of a PAUSED plan starts once the plan is
resumed: stderr says so, with the command.`,
		Example: `  executor retry --tenant tenant-001 --from-checkpoint
  executor retry --tenant tenant-001            # from stage 0`,
		Args:    noArgs,
		PreRunE: requireFlags("tenant"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.queueTenant(cmd.Context(), "the task starts", func(c *client.Client) (*wire.Task, error) {
				return c.RetryTenant(cmd.Context(), tenant, fromCheckpoint)
			})
		},
	}
	tenantFlag(cmd, &tenant)
	cmd.Flags().BoolVar(&fromCheckpoint, "from-checkpoint", false,
		"resume after the last completed stage (default: restart at stage 0)")
	return cmd
}

func (a *invocation) tenantOpCmd(name, short string, op func(*client.Client, context.Context, string) (*wire.Task, error)) *cobra.Command {
	var tenant string
	cmd := &cobra.Command{
		Use:     name + " --tenant T",
		Short:   short,
		Example: fmt.Sprintf("  executor %s --tenant tenant-001", name),
		Args:    noArgs,
		PreRunE: requireFlags("tenant"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return fetchAndPrint(a, func(c *client.Client) (*wire.Task, error) {
				return op(c, cmd.Context(), tenant)
			}, taskTable)
		},
	}
	tenantFlag(cmd, &tenant)
	return cmd
}

func tenantFlag(cmd *cobra.Command, v *string) {
	cmd.Flags().StringVarP(v, "tenant", "t", "", "tenant id (required)")
}

func (a *invocation) taskCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "task",
		Short: "Show a task by id",
		Args:  groupArgs,
		RunE:  groupRun,
	}
	cmd.AddCommand(&cobra.Command{
		Use:     "show ID",
		Short:   "Show a task with its attempt ledger and what each attempt printed",
		Example: "  executor task show 01JD7Y...",
		Args:    exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return fetchAndPrint(a, func(c *client.Client) (*wire.Task, error) {
				return c.Task(cmd.Context(), args[0])
			}, taskDetailTable)
		},
	})
	return cmd
}

// queueTenant runs op, a command that queues the tenant's task again (a retry, a rollback),
// prints the task it answers, and notes on stderr when its plan is PAUSED (the task waits:
// what then starts). A failed read of the plan only loses the note: the command is done.
func (a *invocation) queueTenant(ctx context.Context, starts string, op func(*client.Client) (*wire.Task, error)) error {
	c, err := a.client()
	if err != nil {
		return err
	}
	t, err := op(c)
	if err != nil {
		return err
	}
	if err := a.print(t, taskTable(*t)); err != nil {
		return err
	}
	if p, err := c.Plan(ctx, t.PlanID, 0); err == nil {
		a.notePaused(*p, starts)
	}
	return nil
}
