package cli

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/spf13/cobra"

	"github.com/executor-dev/executor/wire"
)

// planDecisionCmd is `executor plan approve ID` and `executor plan reject ID [--rollback]`: the
// operator's decision on a plan's current ring or canary wave. reject --rollback also rolls
// back every task of the rejected ring that ran.
func (a *invocation) planDecisionCmd(name, short, long string) *cobra.Command {
	var rollback bool
	reject := name == "reject"
	use, example := name+" ID", fmt.Sprintf("  executor plan %s 01JD7X...", name)
	if reject {
		use += " [--rollback]"
		example += "\n  executor plan reject 01JD7X... --rollback   # and put back the tenants the ring reached"
	}
	cmd := &cobra.Command{
		Use:     use,
		Short:   short,
		Long:    long,
		Example: example,
		Args:    exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			var p *wire.Plan
			if reject {
				p, err = c.RejectPlan(cmd.Context(), args[0], rollback)
			} else {
				p, err = c.ApprovePlan(cmd.Context(), args[0])
			}
			if err != nil {
				return err
			}
			if err := a.print(p, planTable(*p)); err != nil {
				return err
			}
			if rollback {
				a.notePaused(*p, "the rollbacks start")
			}
			return nil
		},
	}
	if reject {
		cmd.Flags().BoolVar(&rollback, "rollback", false,
			"also roll back every task of the rejected ring that ran: the tenants it reached are put back")
	}
	return cmd
}

// decideCmd is `executor approve|reject --tenant T [--comment C]`: the operator's decision on
// the gate (an approval stage) the tenant's WAITING task waits at.
func (a *invocation) decideCmd(name, short, long string) *cobra.Command {
	var tenant, comment string
	cmd := &cobra.Command{
		Use:   name + " --tenant T [--comment C]",
		Short: short,
		Long:  long,
		Example: fmt.Sprintf(`  executor %s --tenant tenant-001
  executor %s --tenant tenant-001 --comment "CHG-1234"`, name, name),
		Args:    noArgs,
		PreRunE: requireFlags("tenant"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var t wire.Task
			path := "/v1/tenants/" + url.PathEscape(tenant) + "/" + name
			if err := a.call(cmd.Context(), http.MethodPost, path, wire.DecisionBody{Comment: comment}, &t); err != nil {
				return err
			}
			return a.print(&t, taskTable(t))
		},
	}
	tenantFlag(cmd, &tenant)
	cmd.Flags().StringVar(&comment, "comment", "", "why: kept with the task's decision (at most 1000 bytes)")
	return cmd
}
