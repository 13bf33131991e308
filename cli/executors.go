package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/wire"
)

func (a *invocation) executorsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "executors",
		Short: "List the executors sharing the server's Redis, alive or not",
		Long: `List the executors registered on the Redis the server uses, sorted by name, alive or not.
An executor is alive while it refreshes its liveness key (every lease TTL/3); one that stopped
cleanly is not listed; one that died is listed as not alive until its entry is pruned, an hour
after its last heartbeat. SELF marks the executor that answered (--server). RUNS is how many
tasks it runs: the answering executor's count now; another's as of its last heartbeat (every
lease TTL/3): ask that executor (--server) for its count now.
TOPOLOGY is how it was started (serve --topology):
shared (several executors on the Redis) or alone (the only one). On the in-memory store the
server lists itself.`,
		Example: `  executor executors
  executor executors -o json | jq -r '.executors[] | select(.alive | not) | .name'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return fetchAndPrint(a, func(c *client.Client) (*wire.ExecutorList, error) {
				return c.Executors(cmd.Context())
			}, executorsTable(time.Now()))
		},
	}
}

// executorsTable draws the executors, with the age of their last heartbeat as of now.
func executorsTable(now time.Time) func(wire.ExecutorList) func(io.Writer) {
	return func(l wire.ExecutorList) func(io.Writer) {
		return func(w io.Writer) {
			fmt.Fprintln(w, "NAME\tADDRESS\tALIVE\tSELF\tTOPOLOGY\tRUNS\tSTARTED\tLAST HEARTBEAT\tKINDS")
			for _, e := range l.Executors {
				self := ""
				if e.Self {
					self = "*"
				}
				row(w, e.Name, e.Address, yesNo(e.Alive), self, e.Topology, strconv.Itoa(e.Runs), formatTime(&e.StartedAt),
					heartbeatAge(now, e.LastHeartbeat), strings.Join(e.Kinds, ","))
			}
		}
	}
}

// yesNo shows a boolean in a table.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// heartbeatAge shows how long ago a heartbeat was, to the second ("3s ago"), "" when unknown.
func heartbeatAge(now, at time.Time) string {
	if at.IsZero() {
		return ""
	}
	d := now.Sub(at).Round(time.Second)
	if d < 0 {
		d = 0 // the other executor's clock is a little ahead
	}
	return d.String() + " ago"
}
