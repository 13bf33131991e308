package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/executor-dev/executor/client"
)

// Dynamic shell completion (executor completion bash|zsh|fish|powershell): plan ids and,
// where a plan is named, its tenants, read from the executor at --server.
const (
	completionTimeout = 3 * time.Second // bounds a completion's requests: a shell waits for them
	completionPlans   = 50              // the newest plans a plan id is completed from
	completionTenants = 50              // the tenants of a plan a --tenant is completed from
)

// registerCompletions walks root's commands: an argument ID of a plan command (plan show,
// plan bulk approve, ...) completes from the newest plans; --plan flags too; --tenant
// completes from the tenants of the plan the command names (its ID argument, or --plan), and
// with nothing else without one (there is no listing of tenants to read cheaply).
func (a *invocation) registerCompletions(root *cobra.Command) {
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		if takesPlanID(cmd) && cmd.ValidArgsFunction == nil {
			cmd.ValidArgsFunction = a.completePlanIDs
		}
		if cmd.Flags().Lookup("plan") != nil {
			_ = cmd.RegisterFlagCompletionFunc("plan", a.completePlanIDs)
		}
		if cmd.Flags().Lookup("tenant") != nil {
			_ = cmd.RegisterFlagCompletionFunc("tenant", a.completeTenants)
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// takesPlanID reports whether cmd is a command of 'executor plan' whose first argument is a
// plan's ID (its Use reads "<name> ID ...").
func takesPlanID(cmd *cobra.Command) bool {
	f := strings.Fields(cmd.Use)
	return len(f) > 1 && f[1] == "ID" && strings.HasPrefix(cmd.CommandPath(), "executor plan ")
}

// completionClient is a client of --server (or EXECUTOR_SERVER) with --token (or
// EXECUTOR_TOKEN), and a context bounded by completionTimeout; nil when --server is not a URL.
func (a *invocation) completionClient(cmd *cobra.Command) (*client.Client, context.Context, context.CancelFunc) {
	_ = a.resolveGlobals(cmd, nil) // completion runs no PersistentPreRunE: read the environment here
	c, err := a.client()
	if err != nil {
		return nil, nil, nil
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	return c, ctx, cancel
}

// completePlanIDs completes a plan id, the first argument of a plan command or --plan, from
// the newest completionPlans plans: each id with its name and status as description.
func (a *invocation) completePlanIDs(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp // the ID is given already (the commands with --plan take no argument)
	}
	c, ctx, cancel := a.completionClient(cmd)
	if c == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer cancel()
	l, err := c.ListPlans(ctx, client.PlanQuery{Limit: completionPlans})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
	}
	var out []cobra.Completion
	for _, p := range l.Plans {
		if strings.HasPrefix(p.PlanID, strings.ToUpper(toComplete)) {
			out = append(out, cobra.CompletionWithDesc(p.PlanID, fmt.Sprintf("%s (%s)", p.Name, p.Status)))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeTenants completes --tenant from the tenants of the plan the command names (its ID
// argument, or its --plan flag) that begin with what is typed (the API's tenant prefix
// filter), at most completionTenants; nothing when it names no plan.
func (a *invocation) completeTenants(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	planID := ""
	if f := cmd.Flags().Lookup("plan"); f != nil {
		planID = f.Value.String()
	}
	if planID == "" && takesPlanID(cmd) && len(args) > 0 {
		planID = args[0]
	}
	if planID == "" {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	c, ctx, cancel := a.completionClient(cmd)
	if c == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer cancel()
	page, err := c.PlanTasksPage(ctx, planID, client.TaskQuery{Tenant: toComplete, Limit: completionTenants})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
	}
	out := make([]cobra.Completion, 0, len(page.Tasks))
	for _, t := range page.Tasks {
		out = append(out, cobra.CompletionWithDesc(t.TenantID, t.Status))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
