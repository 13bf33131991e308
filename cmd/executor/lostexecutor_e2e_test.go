package main_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/wire"
)

// kill -9 of the executor running every task of a plan (maxConcurrency 3, 3 tenants: none is
// left queued): the survivor's reconciler interrupts the three without any read, and the plan
// is PAUSED with a reason naming the lost executor and its tenants, never settled FAILED
// (plan show --watch exits 3: it needs an operator); plan resume and plan retry
// --from-checkpoint then complete every tenant with no completed stage run twice.
func TestKilledExecutorRunningEveryTaskPausesThePlan(t *testing.T) {
	t.Parallel()
	rc := newRecorder(t)
	rs := redistest.Start(t)
	a := startExecutor(t, "A", rs.URL(), "--name", "exec-a", "--workers", "4")
	submitted := submitHangingAtS2(t, rc, a, "kill-every-task", 3, tenantsN("e", 3))
	require.Eventually(t, func() bool {
		if rc.inFlight("s2") != 3 {
			return false
		}
		for _, tk := range tasksOf(t, a, submitted.PlanID) {
			if tk.Status != "RUNNING" || tk.Executor != "exec-a" {
				return false
			}
		}
		return true
	}, pollTimeout, 10*time.Millisecond, "A runs every tenant's s2")
	// B starts once A holds every task: nothing of the plan is left for it but A's loss.
	b := startExecutor(t, "B", rs.URL(), "--name", "exec-b")

	a.kill(t)
	killedAt := time.Now()
	rc.hang.Store(false)
	// No read of the plan or its tasks until B's reconciler has interrupted all three.
	require.Eventually(t, func() bool {
		return strings.Count(b.output.String(), "task interrupted: its owner is gone") == 3
	}, 30*time.Second, 50*time.Millisecond, "B's reconciler interrupts A's three runs")
	t.Logf("A's runs interrupted %s after the kill (lease TTL %s)", time.Since(killedAt).Round(time.Millisecond), leaseTTL)

	r := b.cli(t, "plan", "show", submitted.PlanID, "--watch", "-o", "json")
	requireExit(t, 3, r) // needs an operator: not ended
	paused := decode[wire.Plan](t, r.stdout)
	require.Equal(t, "PAUSED", paused.Status)
	assert.Contains(t, paused.Reason, "exec-a", "the reason names the lost executor")
	for _, tk := range tasksOf(t, b, submitted.PlanID) {
		assert.Equal(t, "INTERRUPTED", tk.Status, tk.TenantID)
		assert.Contains(t, paused.Reason, tk.TenantID, "the reason names the interrupted tenant")
		assert.Equal(t, 1, tk.CurrentStage, "%s resumes at s2", tk.TenantID)
	}
	assert.Contains(t, b.output.String(), "plan paused: executor exec-a lost mid-plan")

	// The SRE decides: the interrupted tenants resume at s2.
	requireExit(t, 0, b.cli(t, "plan", "resume", submitted.PlanID))
	requireExit(t, 0, b.cli(t, "plan", "retry", submitted.PlanID, "--from-checkpoint"))
	end := watchPlan(t, b, submitted.PlanID)
	assert.Equal(t, "COMPLETED", end.Status)
	for _, tk := range tasksOf(t, b, submitted.PlanID) {
		assert.Equal(t, "COMPLETED", tk.Status, tk.TenantID)
	}
	assert.Empty(t, rc.twice(), "no completed stage ran twice")
	for _, tn := range tenantsN("e", 3) {
		for _, s := range []string{"s1", "s2", "s3"} {
			assert.Equal(t, 1, rc.answeredCount(tn.ID+"/"+s), tn.ID+"/"+s)
		}
	}
}

// resumeAfterLoss waits until the plan is PAUSED with a reason (an executor running its tasks
// was lost) and resumes it on p, as the SRE does before its interrupted tasks can run again.
func resumeAfterLoss(t *testing.T, p *executorProc, planID string) {
	t.Helper()
	require.Eventually(t, func() bool {
		r := p.cli(t, "plan", "show", planID, "-o", "json")
		if r.code != 0 {
			return false
		}
		pl := decode[wire.Plan](t, r.stdout)
		return pl.Status == "PAUSED" && pl.Reason != ""
	}, pollTimeout, 50*time.Millisecond, "the plan is PAUSED for the lost executor")
	requireExit(t, 0, p.cli(t, "plan", "resume", planID))
}
