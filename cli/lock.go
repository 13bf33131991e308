package cli

import (
	"net/http"
	"net/url"

	"github.com/spf13/cobra"

	"github.com/executor-dev/executor/wire"
)

func (a *invocation) lockCmd() *cobra.Command {
	var tenant string
	cmd := &cobra.Command{
		Use:   "lock --tenant T",
		Short: "Show who holds a tenant's lease, its TTL and the fence epoch",
		Example: `  executor lock --tenant tenant-001
  executor lock --tenant tenant-001 -o json | jq -r .owner`,
		Args:    noArgs,
		PreRunE: requireFlags("tenant"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var l wire.TenantLock
			if err := a.call(cmd.Context(), http.MethodGet, "/v1/tenants/"+url.PathEscape(tenant)+"/lock", nil, &l); err != nil {
				return err
			}
			return a.print(&l, lockTable(l))
		},
	}
	tenantFlag(cmd, &tenant)
	return cmd
}

func (a *invocation) unlockCmd() *cobra.Command {
	var tenant string
	cmd := &cobra.Command{
		Use:   "unlock --tenant T",
		Short: "Remove a tenant's lease; its RUNNING task becomes INTERRUPTED",
		Long: `Remove the tenant's lease whoever holds it (a run that hangs, an executor that is gone)
and fence its holder: the fence epoch of the tenant's latest task goes up, so the old run's
writes are refused. A RUNNING task becomes INTERRUPTED; retry it to go on
('executor retry --tenant T --from-checkpoint').`,
		Example: `  executor unlock --tenant tenant-001`,
		Args:    noArgs,
		PreRunE: requireFlags("tenant"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var u wire.TenantUnlock
			if err := a.call(cmd.Context(), http.MethodPost, "/v1/tenants/"+url.PathEscape(tenant)+"/unlock", nil, &u); err != nil {
				return err
			}
			return a.print(&u, unlockTable(u))
		},
	}
	tenantFlag(cmd, &tenant)
	return cmd
}
