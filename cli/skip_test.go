package cli_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/cli"
	"github.com/executor-dev/executor/wire"
)

// Skipping the tenants an operator will not deploy lets their plan complete "with
// exceptions": --watch exits 0 and the table's outcome line counts them; a skipped task
// cannot be skipped again, and a skip of an unknown tenant is the server's 404.
func TestSkipCompletesThePlanWithExceptions(t *testing.T) {
	t.Parallel()
	url := startServer(t).URL()
	p := submitRequest(t, url, wire.PlanRequest{Stages: []wire.StageRequest{gate("g")}, Tenants: tenantsOf("sk-1", "sk-2", "sk-3")})
	for _, tn := range []string{"sk-1", "sk-2", "sk-3"} {
		waitTenant(t, url, tn, "WAITING")
	}
	r := runCLI(t, url, "skip", "--tenant", "sk-1", "--comment", "decommissioned", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	assert.Equal(t, "SKIPPED", decode[wire.Task](t, r.stdout).Status)
	requireCode(t, cli.ExitFailure, runCLI(t, url, "skip", "--tenant", "sk-1"))
	requireCode(t, cli.ExitFailure, runCLI(t, url, "skip", "--tenant", "nobody"))
	requireCode(t, cli.ExitOK, runCLI(t, url, "cancel", "--tenant", "sk-2"))
	requireCode(t, cli.ExitOK, runCLI(t, url, "approve", "--tenant", "sk-3"))

	r = runCLI(t, url, "plan", "show", p.PlanID, "--watch")
	requireCode(t, cli.ExitOK, r)
	assert.Contains(t, r.stdout, "outcome: done, with 1 cancelled, 1 skipped: executor plan tasks "+p.PlanID+" --status CANCELLED,SKIPPED")
	r = runCLI(t, url, "plan", "show", p.PlanID, "-o", "json")
	requireCode(t, cli.ExitOK, r)
	got := decode[wire.Plan](t, r.stdout)
	assert.Equal(t, "COMPLETED", got.Status)
	assert.Equal(t, "done_with_exceptions", got.Outcome)
	assert.Equal(t, 1, got.Progress["SKIPPED"])
}

// plan bulk skip takes the FAILED tasks by default: the FAILED plan reopens and completes.
func TestBulkSkipCompletesAFailedPlan(t *testing.T) {
	t.Parallel()
	url := startServer(t).URL()
	p := submitRequest(t, url, wire.PlanRequest{Stages: []wire.StageRequest{gate("g")}, Tenants: tenantsOf("bs-1", "bs-2", "bs-3")})
	for _, tn := range []string{"bs-1", "bs-2", "bs-3"} {
		waitTenant(t, url, tn, "WAITING")
	}
	requireCode(t, cli.ExitOK, runCLI(t, url, "reject", "--tenant", "bs-1"))
	requireCode(t, cli.ExitOK, runCLI(t, url, "reject", "--tenant", "bs-2"))
	requireCode(t, cli.ExitOK, runCLI(t, url, "approve", "--tenant", "bs-3"))
	requireCode(t, cli.ExitFailure, runCLI(t, url, "plan", "show", p.PlanID, "--watch"))

	r := runCLI(t, url, "plan", "bulk", "skip", p.PlanID)
	requireCode(t, cli.ExitOK, r)
	assert.Contains(t, r.stdout, "skip: matched 2, applied 2, skipped 0")
	r = runCLI(t, url, "plan", "show", p.PlanID, "--watch", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	got := decode[wire.Plan](t, r.stdout)
	require.Equal(t, "COMPLETED", got.Status)
	assert.Equal(t, 2, got.Progress["SKIPPED"])
}

// plan resume leaves a tenant paused one by one PAUSED, and says so when a wait stops at the
// paused plan; --all resumes it too.
func TestPlanResumeAll(t *testing.T) {
	t.Parallel()
	url := startServer(t).URL()
	p := submitRequest(t, url, wire.PlanRequest{Stages: []wire.StageRequest{sleep("s", "1s"), noop("after")},
		Tenants: tenantsOf("ra-1", "ra-2")})
	waitTenant(t, url, "ra-1", "RUNNING")
	waitTenant(t, url, "ra-2", "RUNNING")
	requireCode(t, cli.ExitOK, runCLI(t, url, "pause", "--tenant", "ra-1"))
	requireCode(t, cli.ExitOK, runCLI(t, url, "plan", "pause", p.PlanID))
	waitTenant(t, url, "ra-1", "PAUSED")
	waitTenant(t, url, "ra-2", "PAUSED")

	r := runCLI(t, url, "plan", "show", p.PlanID, "--watch")
	requireCode(t, cli.ExitNeedsOperator, r)
	assert.Contains(t, r.stderr, "tenants paused one by one stay PAUSED after it: executor plan resume "+p.PlanID+" --all resumes them too")

	requireCode(t, cli.ExitOK, runCLI(t, url, "plan", "resume", p.PlanID))
	waitTenant(t, url, "ra-2", "COMPLETED")
	assert.Equal(t, "PAUSED", waitTenant(t, url, "ra-1", "PAUSED").Status, "paused one by one: it stays paused")
	requireCode(t, cli.ExitOK, runCLI(t, url, "plan", "pause", p.PlanID))
	requireCode(t, cli.ExitOK, runCLI(t, url, "plan", "resume", p.PlanID, "--all"))
	requireCode(t, cli.ExitOK, runCLI(t, url, "plan", "show", p.PlanID, "--watch"))
}
