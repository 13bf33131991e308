package cli

import (
	"github.com/spf13/cobra"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/wire"
)

func (a *invocation) skipCmd() *cobra.Command {
	var tenant, comment string
	cmd := &cobra.Command{
		Use:   "skip --tenant T [--comment C]",
		Short: "Skip a tenant: not deployed; its plan completes without it",
		Long: `Skip the tenant's latest task: it ends SKIPPED, by your decision, and is not deployed.
A SKIPPED task is no failure: once every other tenant of its plan completed, the plan ends
COMPLETED "with exceptions" (outcome done_with_exceptions; the progress counts the tenants
cancelled or skipped), and --wait exits 0.

The task must not run: PENDING, PAUSED, WAITING at a gate, INTERRUPTED, FAILED or CANCELLED.
A RUNNING task is refused (409, exit 1): its stage may be half applied; pause it ('executor
pause --tenant T': it stops at its next stage boundary) or cancel it, then skip it. A FAILED
plan whose failed tenants are all skipped completes. The stages the task completed stay
applied ('executor rollback --tenant T' undoes them); 'executor retry --tenant T' brings it
back. --comment is kept in the audit record ('executor audit --tenant T').`,
		Example: `  executor skip --tenant tenant-007
  executor skip --tenant tenant-007 --comment "decommissioned: CHG-1234"`,
		Args:    noArgs,
		PreRunE: requireFlags("tenant"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return fetchAndPrint(a, func(c *client.Client) (*wire.Task, error) {
				return c.SkipTenant(cmd.Context(), tenant, comment)
			}, taskTable)
		},
	}
	tenantFlag(cmd, &tenant)
	cmd.Flags().StringVar(&comment, "comment", "", "why: kept in the audit record (at most 1000 bytes)")
	return cmd
}
