package cli_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/cli"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/stagekind"
	"github.com/executor-dev/executor/wire"
)

// status --watch waits until the tenant's latest task is at rest, prints it, and exits as it
// ended: 0 COMPLETED, 3 when it needs an operator (saying what to run), 1 otherwise.
func TestStatusWatch(t *testing.T) {
	t.Parallel()
	kind := &flaky{runs: map[string]int{}}
	kind.broken.Store(true)
	srv := servertest.Start(t, func(k *stagekind.Registry) { require.NoError(t, k.Register("flaky", kind)) })
	url := srv.URL()
	submitRequest(t, url, wire.PlanRequest{Name: "ok", Stages: []wire.StageRequest{noop("a"), sleep("bake", "300ms")}, Tenants: tenantsOf("sw-ok")})
	submitRequest(t, url, wire.PlanRequest{Name: "gated", Stages: []wire.StageRequest{sleep("prep", "200ms"), gate("change-approval")}, Tenants: tenantsOf("sw-gate")})
	submitRequest(t, url, wire.PlanRequest{Name: "broken", Stages: []wire.StageRequest{sleep("prep", "200ms"), {Name: "fragile", Kind: "flaky"}}, Tenants: tenantsOf("sw-fail")})
	canary := submitRequest(t, url, wire.PlanRequest{Name: "canary", Canary: &wire.CanaryRequest{Tenants: 1, Then: "approve"},
		Stages: []wire.StageRequest{noop("a")}, Tenants: tenantsOf("sw-c1", "sw-c2")})
	tests := []struct {
		name   string
		tenant string
		exit   int
		status string
		stderr []string // the lines of stderr; "" when none
	}{
		{"completed", "sw-ok", cli.ExitOK, "COMPLETED", nil},
		{"waiting at a gate", "sw-gate", cli.ExitNeedsOperator, "WAITING", []string{
			"error: tenant sw-gate's task {task} is WAITING at change-approval (2/2): it cannot go on without an operator",
			"  decide its gate: executor approve --tenant sw-gate (or executor reject --tenant sw-gate)",
		}},
		{"failed", "sw-fail", cli.ExitFailure, "FAILED", []string{"error: tenant sw-fail's task {task} ended FAILED"}},
		{"pending behind a canary awaiting approval", "sw-c2", cli.ExitNeedsOperator, "PENDING", []string{
			"error: plan " + canary.PlanID + " cannot progress without an operator (RUNNING PENDING=1 COMPLETED=1)",
			"  the canary wave completed and awaits approval: executor plan approve " + canary.PlanID + " (or executor plan reject " + canary.PlanID + ")",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, url, "status", "--tenant", tt.tenant, "--watch", "-o", "json")
			requireCode(t, tt.exit, r)
			tk := decode[wire.Task](t, r.stdout)
			assert.Equal(t, tt.status, tk.Status)
			var want []string
			for _, l := range tt.stderr {
				want = append(want, strings.ReplaceAll(l, "{task}", tk.TaskID))
			}
			if want == nil {
				assert.Empty(t, r.stderr)
				return
			}
			table := runCLI(t, url, "status", "--tenant", tt.tenant, "--watch")
			requireCode(t, tt.exit, table)
			assert.Contains(t, table.stdout, tt.status, "the task is printed as status does")
			assert.Equal(t, want, strings.Split(strings.TrimRight(table.stderr, "\n"), "\n"))
		})
	}
}
