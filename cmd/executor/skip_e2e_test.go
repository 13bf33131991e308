package main_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/wire"
)

// cliTenantTask reads the tenant's latest task through p (status --tenant T -o json); ok is
// false when the command did not answer 0.
func cliTenantTask(t *testing.T, p *executorProc, tenant string) (wire.Task, bool) {
	t.Helper()
	r := p.cli(t, "status", "--tenant", tenant, "-o", "json")
	if r.code != 0 {
		return wire.Task{}, false
	}
	return decode[wire.Task](t, r.stdout), true
}

// requireTenantStatus waits until the tenant's latest task, read through p, is in status.
func requireTenantStatus(t *testing.T, p *executorProc, tenant, status string) wire.Task {
	t.Helper()
	var last wire.Task
	require.Eventually(t, func() bool {
		tk, ok := cliTenantTask(t, p, tenant)
		last = tk
		return ok && tk.Status == status
	}, pollTimeout, 50*time.Millisecond, "%s never read %s through %s (last: %s)", tenant, status, p.name, last.Status)
	return last
}

// A plan submitted through A waits at an approval gate for each of its 3 tenants. Through
// B an operator rejects one tenant's gate (its task ends FAILED) and skips it with
// `executor skip --tenant`; the other two are approved through A. The plan ends COMPLETED,
// outcome done_with_exceptions, one task SKIPPED: `plan show --watch` exits 0 through
// either executor, and says so alike.
func TestSkipARejectedTenantCompletesThePlanOnEitherExecutor(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	a := startExecutor(t, "A", rs.URL(), "--name", "exec-a")
	b := startExecutor(t, "B", rs.URL(), "--name", "exec-b")

	tenants := tenantsN("sk", 3)
	planFile := writePlan(t, wire.PlanRequest{Name: "skip-gate", Stages: []wire.StageRequest{
		{Name: "gate", Kind: "approval", Params: map[string]any{"message": "deploy {{.TenantID}}?"}},
		{Name: "after", Kind: "noop"},
	}, Tenants: tenants})
	r := a.cli(t, "submit", "-f", planFile, "-o", "json")
	requireExit(t, 0, r)
	submitted := decode[wire.Plan](t, r.stdout)
	for _, tn := range tenants {
		requireTenantStatus(t, b, tn.ID, "WAITING")
	}

	rejected, approved := tenants[0].ID, []string{tenants[1].ID, tenants[2].ID}
	requireExit(t, 0, b.cli(t, "reject", "--tenant", rejected, "--comment", "not this one"))
	failed := requireTenantStatus(t, b, rejected, "FAILED")
	require.NotNil(t, failed.LastError)
	assert.Equal(t, "permanent", failed.LastError.Class)

	r = b.cli(t, "skip", "--tenant", rejected, "--comment", "decommissioned", "-o", "json")
	requireExit(t, 0, r)
	skipped := decode[wire.Task](t, r.stdout)
	assert.Equal(t, "SKIPPED", skipped.Status)
	assert.Equal(t, failed.TaskID, skipped.TaskID, "the skip acts on the rejected task")

	for _, tenant := range approved {
		requireExit(t, 0, a.cli(t, "approve", "--tenant", tenant))
	}

	for _, p := range []*executorProc{b, a} {
		r := p.cli(t, "plan", "show", submitted.PlanID, "--watch", "-o", "json")
		requireExit(t, 0, r) // a skipped tenant is a decision, not a failure
		end := decode[wire.Plan](t, r.stdout)
		assert.Equal(t, "COMPLETED", end.Status, "through %s", p.name)
		assert.Equal(t, "done_with_exceptions", end.Outcome, "through %s", p.name)
		assert.Equal(t, 1, end.Progress["SKIPPED"], "through %s", p.name)
		assert.Equal(t, 2, end.Progress["COMPLETED"], "through %s", p.name)
		assert.Zero(t, end.Progress["FAILED"], "through %s", p.name)

		table := requireCLI(t, p, "plan", "show", submitted.PlanID)
		assert.Contains(t, table, "outcome: done, with 1 skipped", "through %s", p.name)
	}
	for _, tk := range tasksOf(t, a, submitted.PlanID) {
		want := "COMPLETED"
		if tk.TenantID == rejected {
			want = "SKIPPED"
		}
		assert.Equal(t, want, tk.Status, tk.TenantID)
	}
}

// A runs every tenant of a plan (B starts once A holds them all: B is idle). Through B an
// operator pauses one tenant while its first stage, a sleep, runs, then pauses the plan; once
// every task is PAUSED, A is killed (kill -9). Through B: `plan resume P` resumes the tenants
// the plan's pause paused and leaves the one paused one by one PAUSED; `plan resume P --all`
// (after `plan pause P` again: --all is refused on a RUNNING plan) resumes it too, and the
// plan ends COMPLETED, no stage run twice.
func TestPlanResumeKeepsATenantPausedOneByOneAfterItsExecutorWasKilled(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	a := startExecutor(t, "A", rs.URL(), "--name", "exec-a")

	tenants := tenantsN("pr", 3)
	// The first stage sleeps long enough for B to start and the pause to reach the tenant
	// during it (checked below, not timed: a pause that came too late fails the test saying so).
	planFile := writePlan(t, wire.PlanRequest{Name: "pause-one", MaxConcurrency: len(tenants), Stages: []wire.StageRequest{
		{Name: "first", Kind: "sleep", Params: map[string]any{"duration": "5s"}},
		{Name: "second", Kind: "noop"},
	}, Tenants: tenants})
	r := a.cli(t, "submit", "-f", planFile, "-o", "json")
	requireExit(t, 0, r)
	planID := decode[wire.Plan](t, r.stdout).PlanID
	require.Eventually(t, func() bool {
		for _, tk := range tasksOf(t, a, planID) {
			if tk.Status != "RUNNING" || tk.Executor != "exec-a" {
				return false
			}
		}
		return true
	}, pollTimeout, 10*time.Millisecond, "A runs every tenant's first stage")
	// B starts once A holds every task: the plan leaves it nothing to run.
	b := startExecutor(t, "B", rs.URL(), "--name", "exec-b")

	one := tenants[0].ID
	r = b.cli(t, "pause", "--tenant", one, "-o", "json")
	requireExit(t, 0, r)
	asked := decode[wire.Task](t, r.stdout)
	require.Equal(t, "RUNNING", asked.Status, "%s was paused during its first stage", one)
	require.Equal(t, 0, asked.CurrentStage, "%s was paused during its first stage", one)
	assert.True(t, asked.PauseRequested)
	requireExit(t, 0, b.cli(t, "plan", "pause", planID))

	// Every task pauses at the end of its first stage.
	require.Eventually(t, func() bool {
		for _, tk := range tasksOf(t, b, planID) {
			if tk.Status != "PAUSED" {
				return false
			}
		}
		return true
	}, pollTimeout, 50*time.Millisecond, "every task is PAUSED")
	for _, tk := range tasksOf(t, b, planID) {
		assert.Equal(t, 1, tk.CurrentStage, "%s paused after its first stage", tk.TenantID)
		assert.Equal(t, tk.TenantID != one, tk.PausedByPlan, "%s: paused by the plan's pause", tk.TenantID)
	}
	r = b.cli(t, "plan", "show", planID, "--watch", "-o", "json")
	requireExit(t, 3, r) // at rest: it needs an operator
	assert.Equal(t, "PAUSED", decode[wire.Plan](t, r.stdout).Status)

	a.kill(t)
	require.Eventually(t, func() bool {
		r := b.cli(t, "executors", "-o", "json")
		if r.code != 0 {
			return false
		}
		for _, e := range decode[wire.ExecutorList](t, r.stdout).Executors {
			if e.Name == "exec-a" {
				return !e.Alive
			}
		}
		return false
	}, pollTimeout, 100*time.Millisecond, "B sees A dead")

	// plan resume: the tenants the plan's pause paused run on B and complete; the tenant
	// paused one by one stays PAUSED.
	r = b.cli(t, "plan", "resume", planID, "-o", "json")
	requireExit(t, 0, r)
	assert.Equal(t, "RUNNING", decode[wire.Plan](t, r.stdout).Status)
	for _, tn := range tenants[1:] {
		tk := requireTenantStatus(t, b, tn.ID, "COMPLETED")
		assert.Equal(t, "exec-b", tk.Executor, tn.ID)
	}
	r = b.cli(t, "plan", "show", planID, "--watch", "-o", "json")
	requireExit(t, 3, r) // one task PAUSED: it cannot progress without an operator
	held := decode[wire.Plan](t, r.stdout)
	assert.Equal(t, "RUNNING", held.Status)
	assert.Equal(t, 1, held.Progress["PAUSED"])
	assert.Contains(t, r.stderr, one)
	tk, ok := cliTenantTask(t, b, one)
	require.True(t, ok)
	assert.Equal(t, "PAUSED", tk.Status, "%s, paused one by one, stays PAUSED after plan resume", one)
	assert.Equal(t, 1, tk.CurrentStage)

	// plan resume --all resumes it too. The plan is RUNNING now, and `plan resume --all` on a
	// RUNNING plan is refused (409 "cannot resume a RUNNING plan"): pause it again first.
	requireExit(t, 0, b.cli(t, "plan", "pause", planID))
	requireExit(t, 0, b.cli(t, "plan", "resume", planID, "--all"))
	end := watchPlan(t, b, planID)
	assert.Equal(t, "COMPLETED", end.Status)
	assert.Equal(t, "done", end.Outcome)
	for _, tn := range tenants {
		tk, ok := cliTenantTask(t, b, tn.ID)
		require.True(t, ok, tn.ID)
		assert.Equal(t, "COMPLETED", tk.Status, tn.ID)
		succeeded := map[string]int{}
		for _, at := range tk.Attempts {
			if at.Outcome == "succeeded" {
				succeeded[at.Stage]++
			}
		}
		assert.Equal(t, map[string]int{"first": 1, "second": 1}, succeeded, "%s: each stage ran once", tn.ID)
	}
}
