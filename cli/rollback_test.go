package cli_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/cli"
	"github.com/executor-dev/executor/wire"
)

// undoable is a noop stage whose undo is a noop too.
func undoable(name string) wire.StageRequest {
	s := noop(name)
	s.Undo = &wire.StageRequest{Kind: "noop"}
	return s
}

// tenantStatuses reads the status of every task of a plan, by tenant, through `plan tasks`.
func tenantStatuses(t *testing.T, url, planID string) map[string]string {
	t.Helper()
	r := runCLI(t, url, "plan", "tasks", planID, "-o", "json")
	requireCode(t, cli.ExitOK, r)
	out := map[string]string{}
	for _, tk := range decode[wire.TaskList](t, r.stdout).Tasks {
		out[tk.TenantID] = tk.Status
	}
	return out
}

// plan bulk rollback --ring rolls back the tasks of one ring only, each undoing its stages;
// --ring takes a wave's name or a ring's index, and a bad one, or a ring on a plan without
// rings, is the server's 400 (exit 1); --status takes only the statuses a rollback starts from.
func TestBulkRollbackOfARing(t *testing.T) {
	t.Parallel()
	url := startServer(t).URL()
	p := submitRequest(t, url, wire.PlanRequest{
		Name:    "rings-rollback",
		Stages:  []wire.StageRequest{undoable("push"), undoable("config")},
		Tenants: tenantsOf("br-1", "br-2", "br-3", "br-4", "br-5"),
		Waves:   []wire.WaveRequest{{Name: "canary", Size: 2}, {Name: "rest", Size: "rest"}},
	})
	for _, tn := range []string{"br-1", "br-2", "br-3", "br-4", "br-5"} {
		waitTenant(t, url, tn, "COMPLETED")
	}

	r := runCLI(t, url, "plan", "bulk", "rollback", p.PlanID, "--ring", "canary")
	requireCode(t, cli.ExitOK, r)
	assert.Equal(t, "rollback: matched 2, applied 2, skipped 0\n", r.stdout)
	for _, tn := range []string{"br-1", "br-2"} {
		tk := waitTenant(t, url, tn, "ROLLED_BACK")
		assert.Equal(t, 0, tk.CurrentStage, "no stage still applied")
		assert.Equal(t, 2, tk.Attempt, "the rollback is a run of its own")
	}
	assert.Equal(t, map[string]string{"br-1": "ROLLED_BACK", "br-2": "ROLLED_BACK", "br-3": "COMPLETED", "br-4": "COMPLETED", "br-5": "COMPLETED"},
		tenantStatuses(t, url, p.PlanID), "ring 1 is untouched")

	// The rest by index, one tenant of it by prefix; ROLLED_BACK is not a status a rollback
	// starts from, so ring 0 matches nothing more.
	r = runCLI(t, url, "plan", "bulk", "rollback", p.PlanID, "--ring", "1", "--tenant", "br-5", "--status", "completed", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	res := decode[wire.BulkResult](t, r.stdout)
	assert.Equal(t, "rollback", res.Action)
	assert.Equal(t, 1, res.Matched)
	assert.Equal(t, 1, res.Applied)
	waitTenant(t, url, "br-5", "ROLLED_BACK")
	r = runCLI(t, url, "plan", "bulk", "rollback", p.PlanID, "--ring", "0")
	requireCode(t, cli.ExitOK, r)
	assert.Equal(t, "rollback: matched 0, applied 0, skipped 0\n", r.stdout)

	// --ring filters the other actions too: a retry of ring 0 runs its tasks forward again.
	r = runCLI(t, url, "plan", "bulk", "retry", p.PlanID, "--ring", "canary", "--status", "ROLLED_BACK", "--from-checkpoint")
	requireCode(t, cli.ExitOK, r)
	assert.Equal(t, "retry: matched 2, applied 2, skipped 0\n", r.stdout)
	waitTenant(t, url, "br-1", "COMPLETED")
	waitTenant(t, url, "br-2", "COMPLETED")
	assert.Equal(t, "ROLLED_BACK", tenantStatuses(t, url, p.PlanID)["br-5"], "ring 1 was not retried")

	requireRemoteError(t, runCLI(t, url, "plan", "bulk", "rollback", p.PlanID, "--ring", "7"), "(field: ring)")
	flat := submitRequest(t, url, wire.PlanRequest{Stages: []wire.StageRequest{undoable("push")}, Tenants: tenantsOf("br-flat")})
	waitTenant(t, url, "br-flat", "COMPLETED")
	requireRemoteError(t, runCLI(t, url, "plan", "bulk", "rollback", flat.PlanID, "--ring", "0"), "400")
	r = runCLI(t, url, "plan", "bulk", "rollback", p.PlanID, "--status", "WAITING")
	requireCode(t, cli.ExitUsage, r)
	assert.Contains(t, r.stderr, "plan bulk rollback takes RUNNING, PAUSED, COMPLETED, FAILED, CANCELLED, INTERRUPTED, ROLLBACK_FAILED")
}

// plan reject --rollback halts a rolling plan at its current ring and rolls back the ring's
// tasks that ran: the canary tenant is put back (ROLLED_BACK), the others never start. A plan
// without rings is the server's 400 with --rollback, its 409 without.
func TestPlanRejectWithRollback(t *testing.T) {
	t.Parallel()
	url := startServer(t).URL()
	p := submitRequest(t, url, wire.PlanRequest{
		Name:    "reject-rollback",
		Stages:  []wire.StageRequest{undoable("push"), undoable("config")},
		Tenants: tenantsOf("rj-1", "rj-2", "rj-3"),
		Waves:   []wire.WaveRequest{{Name: "first", Size: 1, Then: "approve"}, {Name: "rest", Size: "rest"}},
	})
	waitTenant(t, url, "rj-1", "COMPLETED")

	r := runCLI(t, url, "plan", "reject", p.PlanID, "--rollback", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	got := decode[wire.Plan](t, r.stdout)
	require.NotNil(t, got.Rings)
	assert.Equal(t, "rejected", got.Rings.Waves[0].State)
	tk := waitTenant(t, url, "rj-1", "ROLLED_BACK")
	require.Len(t, tk.Attempts, 4, "push and config, then their undos")
	assert.True(t, tk.Attempts[2].Undo)
	assert.Equal(t, "config", tk.Attempts[2].Stage, "newest first")
	assert.Equal(t, map[string]string{"rj-1": "ROLLED_BACK", "rj-2": "CANCELLED", "rj-3": "CANCELLED"}, tenantStatuses(t, url, p.PlanID))

	flat := submitRequest(t, url, wire.PlanRequest{Stages: []wire.StageRequest{undoable("push")}, Tenants: tenantsOf("rj-flat")})
	requireRemoteError(t, runCLI(t, url, "plan", "reject", flat.PlanID, "--rollback"), "(field: rollback)")
	requireRemoteError(t, runCLI(t, url, "plan", "reject", flat.PlanID), "409")
	r = runCLI(t, url, "plan", "approve", p.PlanID, "--rollback")
	requireCode(t, cli.ExitUsage, r)
	assert.Contains(t, r.stderr, "unknown flag: --rollback", "approve has no --rollback")
}

// plan show says what a task that fails sets off (onFailure), when it is not none.
func TestPlanShowSaysOnFailure(t *testing.T) {
	t.Parallel()
	url := startServer(t).URL()
	p := submitRequest(t, url, wire.PlanRequest{
		Stages: []wire.StageRequest{undoable("push"), noop("verify")}, Tenants: tenantsOf("of-1"), OnFailure: "rollback",
	})
	r := runCLI(t, url, "plan", "show", p.PlanID)
	requireCode(t, cli.ExitOK, r)
	assert.Contains(t, r.stdout, "\non failure: rollback (a task that fails undoes the stages it completed, newest first)\n")
	j := decode[wire.Plan](t, runCLI(t, url, "plan", "show", p.PlanID, "-o", "json").stdout)
	assert.Equal(t, "rollback", j.OnFailure)
	assert.Equal(t, []wire.StageRef{{Name: "push", Kind: "noop", Undo: "noop"}, {Name: "verify", Kind: "noop"}}, j.Stages)

	flat := submitRequest(t, url, wire.PlanRequest{Stages: []wire.StageRequest{noop("push")}, Tenants: tenantsOf("of-2")})
	r = runCLI(t, url, "plan", "show", flat.PlanID)
	requireCode(t, cli.ExitOK, r)
	assert.NotContains(t, r.stdout, "on failure:")
}
