package cli

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/spf13/cobra"

	"github.com/executor-dev/executor/wire"
)

// planDecisionCmd is `executor plan approve|reject ID`: the operator's decision on a plan's
// canary wave.
func (a *invocation) planDecisionCmd(name, short, long string) *cobra.Command {
	return &cobra.Command{
		Use:     name + " ID",
		Short:   short,
		Long:    long,
		Example: fmt.Sprintf("  executor plan %s 01JD7X...", name),
		Args:    exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var p wire.Plan
			if err := a.call(cmd.Context(), http.MethodPost, "/v1/plans/"+url.PathEscape(args[0])+"/"+name, nil, &p); err != nil {
				return err
			}
			return a.print(&p, planTable(p))
		},
	}
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
