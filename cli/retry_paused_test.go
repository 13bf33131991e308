package cli_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/cli"
	"github.com/executor-dev/executor/wire"
)

// A retry of a task whose plan is PAUSED succeeds, but the task waits, PENDING, until the plan
// is resumed: retry --tenant and plan retry say so on stderr, with the command that resumes
// it; on a plan that runs they say nothing more.
func TestRetryOnAPausedPlanSaysItWaitsForResume(t *testing.T) {
	t.Parallel()
	url := startServer(t).URL()
	p := submitRequest(t, url, wire.PlanRequest{Stages: []wire.StageRequest{gate("g")}, Tenants: tenantsOf("rpp-1", "rpp-2", "rpp-3")})
	for _, tn := range []string{"rpp-1", "rpp-2", "rpp-3"} {
		waitTenant(t, url, tn, "WAITING")
	}
	requireCode(t, cli.ExitOK, runCLI(t, url, "cancel", "--tenant", "rpp-1"))
	requireCode(t, cli.ExitOK, runCLI(t, url, "cancel", "--tenant", "rpp-2"))
	requireCode(t, cli.ExitOK, runCLI(t, url, "plan", "pause", p.PlanID))

	r := runCLI(t, url, "retry", "--tenant", "rpp-1", "--from-checkpoint", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	require.Equal(t, "PENDING", decode[wire.Task](t, r.stdout).Status)
	assert.Equal(t, fmt.Sprintf("plan %s is PAUSED: the task starts once it is resumed: executor plan resume %s\n", p.PlanID, p.PlanID), r.stderr)

	r = runCLI(t, url, "plan", "retry", p.PlanID, "--status", "CANCELLED", "--from-checkpoint")
	requireCode(t, cli.ExitOK, r)
	assert.Contains(t, r.stdout, "retried 1 task(s), skipped 0")
	assert.Equal(t, fmt.Sprintf("plan %s is PAUSED: the retried tasks start once it is resumed: executor plan resume %s\n", p.PlanID, p.PlanID), r.stderr)

	requireCode(t, cli.ExitOK, runCLI(t, url, "plan", "resume", p.PlanID))
	waitTenant(t, url, "rpp-1", "WAITING")
	requireCode(t, cli.ExitOK, runCLI(t, url, "cancel", "--tenant", "rpp-1"))
	r = runCLI(t, url, "retry", "--tenant", "rpp-1", "--from-checkpoint")
	requireCode(t, cli.ExitOK, r)
	assert.Empty(t, r.stderr, "the plan runs")
}
