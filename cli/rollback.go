package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/wire"
)

// rollbackCmd is `executor rollback --tenant T`: roll the tenant's latest task back, a new run
// that undoes the stages it completed, newest first.
func (a *invocation) rollbackCmd() *cobra.Command {
	var tenant string
	cmd := &cobra.Command{
		Use:   "rollback --tenant T",
		Short: "Roll back a tenant's task: undo its completed stages, newest first",
		Long: fmt.Sprintf(`Roll back the tenant's latest task, one that ran (its status one of
%s): a new run, its attempt up by one, undoes the stages the
task completed and still has applied, newest first, each with its stage's undo (a stage
without one is passed over). The task ends ROLLED_BACK once every stage is undone, or
ROLLBACK_FAILED at an undo that failed: 'executor rollback --tenant T' again goes on from
there, as it does for a task paused, cancelled or interrupted while rolling back.
'executor retry --tenant T' runs a ROLLED_BACK task forward again.

'executor status --tenant T' follows it: its STAGE reads undo:<stage> (the undo to run next)
and a "rolling back" line says how many stages are still applied; 'executor task show ID'
lists each undo's attempts as undo:<stage>. A RUNNING task is asked to roll back: its own
run turns back at its next stage boundary, or as its stage ends. Its plan reopens if it had
ended; a task of a PAUSED plan starts once the plan is resumed: stderr says so, with the
command. A WAITING task is a 409 (exit 1): decide or cancel it first; so is a task that
completed no stage (nothing to undo). 'executor plan bulk rollback ID' rolls back a
plan's tasks matching filters (--ring: one ring's).`, strings.Join(statusNames(task.UndoableStatuses()), ", ")),
		Example: `  executor rollback --tenant tenant-001
  executor rollback --tenant tenant-001 -o json | jq .rollingBack`,
		Args:    noArgs,
		PreRunE: requireFlags("tenant"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.queueTenant(cmd.Context(), "the rollback starts", func(c *client.Client) (*wire.Task, error) {
				return c.RollbackTenant(cmd.Context(), tenant)
			})
		},
	}
	tenantFlag(cmd, &tenant)
	return cmd
}
