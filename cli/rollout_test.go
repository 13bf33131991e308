package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/auth"
	"github.com/executor-dev/executor/cli"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/stagekind"
	"github.com/executor-dev/executor/wire"
)

// writeRequest writes a plan submission to a JSON file.
func writeRequest(t *testing.T, name string, req wire.PlanRequest) string {
	t.Helper()
	b, err := json.Marshal(req)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), name+".json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}

func approval(name, message string) wire.StageRequest {
	return wire.StageRequest{Name: name, Kind: "approval", Params: map[string]any{"message": message}}
}

func tenantsOf(ids ...string) []wire.TenantRequest {
	out := make([]wire.TenantRequest, len(ids))
	for i, id := range ids {
		out[i] = wire.TenantRequest{ID: id}
	}
	return out
}

// submitJSON submits a plan file and returns the created plan.
func submitJSON(t *testing.T, url, file string) wire.Plan {
	t.Helper()
	r := runCLI(t, url, "submit", "-f", file, "-o", "json")
	requireCode(t, cli.ExitOK, r)
	return decode[wire.Plan](t, r.stdout)
}

// waitPhase polls `plan show` until the plan's canary wave is in phase (bounded).
func waitPhase(t *testing.T, url, planID, phase string) wire.Plan {
	t.Helper()
	var last wire.Plan
	require.Eventually(t, func() bool {
		r := runCLI(t, url, "plan", "show", planID, "-o", "json")
		if r.code != cli.ExitOK {
			return false
		}
		last = decode[wire.Plan](t, r.stdout)
		return last.Canary != nil && last.Canary.Phase == phase
	}, 10*time.Second, 20*time.Millisecond, "plan %s never reached phase %s", planID, phase)
	return last
}

// requireRemoteError requires exit status 1 with one error line naming status, and no output.
func requireRemoteError(t *testing.T, r result, status string) {
	t.Helper()
	requireCode(t, cli.ExitFailure, r)
	requireErrorLine(t, r)
	assert.Contains(t, r.stderr, status)
	assert.Empty(t, r.stdout)
}

func TestApproveRejectTenantCommands(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	file := writeRequest(t, "gates", wire.PlanRequest{
		Stages:  []wire.StageRequest{noop("prep"), approval("gate", "ship {{.TenantID}}?"), noop("after")},
		Tenants: tenantsOf("ag-1", "ag-2"),
	})
	p := submitJSON(t, srv.URL(), file)
	waitTenant(t, srv.URL(), "ag-1", "WAITING")
	waitTenant(t, srv.URL(), "ag-2", "WAITING")

	t.Run("status shows the wait", func(t *testing.T) {
		r := runCLI(t, srv.URL(), "status", "--tenant", "ag-1")
		requireCode(t, cli.ExitOK, r)
		assert.Contains(t, r.stdout, "WAITING")
		assert.Contains(t, r.stdout, "waiting: approval at stage gate (2/3) since ")
		assert.Contains(t, r.stdout, ": ship ag-1?")
		assert.Contains(t, r.stdout, "executor approve --tenant ag-1")
	})

	r := runCLI(t, srv.URL(), "approve", "--tenant", "ag-1", "--comment", "CHG-42", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	approved := decode[wire.Task](t, r.stdout)
	require.NotNil(t, approved.Decision)
	assert.True(t, approved.Decision.Approved)
	assert.Equal(t, "CHG-42", approved.Decision.Comment)
	assert.Nil(t, approved.Wait)

	r = runCLI(t, srv.URL(), "reject", "--tenant", "ag-2", "--comment", "not today")
	requireCode(t, cli.ExitOK, r)
	assert.Contains(t, r.stdout, "decision: rejected at stage gate (2/3) in run 1")
	assert.Contains(t, r.stdout, ": not today")

	r = runCLI(t, srv.URL(), "plan", "show", p.PlanID, "--watch", "-o", "json")
	requireCode(t, cli.ExitFailure, r) // ag-2 was rejected
	assert.Equal(t, "FAILED", decode[wire.Plan](t, r.stdout).Status)
	assert.Equal(t, "COMPLETED", waitTenant(t, srv.URL(), "ag-1", "COMPLETED").Status)
	failed := waitTenant(t, srv.URL(), "ag-2", "FAILED")
	require.NotNil(t, failed.LastError)
	assert.NotContains(t, failed.LastError.Message, "not today", "the comment is on the decision only: errors are logged")
	require.NotNil(t, failed.Decision)
	assert.Equal(t, "not today", failed.Decision.Comment)

	requireRemoteError(t, runCLI(t, srv.URL(), "approve", "--tenant", "ag-1"), "409")
	requireRemoteError(t, runCLI(t, srv.URL(), "reject", "--tenant", "nobody"), "404")
	requireRemoteError(t, runCLI(t, srv.URL(), "approve", "--tenant", "ag-1", "--comment", strings.Repeat("x", 1001)), "(field: comment)")
}

func TestPlanCanaryCommands(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	canaryPlan := func(name string, ids ...string) string {
		return writeRequest(t, name, wire.PlanRequest{
			Name: name, StartRate: 600, Canary: &wire.CanaryRequest{Tenants: 1, Then: "approve"},
			Stages: []wire.StageRequest{noop("a")}, Tenants: tenantsOf(ids...),
		})
	}

	t.Run("approve", func(t *testing.T) {
		t.Parallel()
		p := submitJSON(t, srv.URL(), canaryPlan("canary-ok", "pc-1", "pc-2"))
		waitPhase(t, srv.URL(), p.PlanID, "AWAITING_APPROVAL")

		r := runCLI(t, srv.URL(), "plan", "show", p.PlanID)
		requireCode(t, cli.ExitOK, r)
		assert.Contains(t, r.stdout, "canary: first 1 tenant(s), then approve; phase AWAITING_APPROVAL")
		assert.Contains(t, r.stdout, "executor plan approve "+p.PlanID)
		assert.Contains(t, r.stdout, "start rate: at most 600 task starts per minute")

		r = runCLI(t, srv.URL(), "plan", "approve", p.PlanID, "-o", "json")
		requireCode(t, cli.ExitOK, r)
		approved := decode[wire.Plan](t, r.stdout)
		require.NotNil(t, approved.Canary)
		assert.Equal(t, "PROMOTED", approved.Canary.Phase)

		r = runCLI(t, srv.URL(), "plan", "show", p.PlanID, "--watch", "-o", "json")
		requireCode(t, cli.ExitOK, r)
		assert.Equal(t, 2, decode[wire.Plan](t, r.stdout).Progress["COMPLETED"])

		requireRemoteError(t, runCLI(t, srv.URL(), "plan", "approve", p.PlanID), "409")
	})

	t.Run("reject", func(t *testing.T) {
		t.Parallel()
		p := submitJSON(t, srv.URL(), canaryPlan("canary-no", "pr-1", "pr-2"))
		waitPhase(t, srv.URL(), p.PlanID, "AWAITING_APPROVAL")

		r := runCLI(t, srv.URL(), "plan", "reject", p.PlanID)
		requireCode(t, cli.ExitOK, r)
		assert.Contains(t, r.stdout, "phase HALTED")
		assert.Equal(t, "CANCELLED", waitTenant(t, srv.URL(), "pr-2", "CANCELLED").Status, "the rest never start")

		requireRemoteError(t, runCLI(t, srv.URL(), "plan", "reject", p.PlanID), "409")
	})

	t.Run("unknown and malformed plans", func(t *testing.T) {
		t.Parallel()
		for _, op := range []string{"approve", "reject"} {
			requireRemoteError(t, runCLI(t, srv.URL(), "plan", op, "01JD0000000000000000000000"), "404")
			requireRemoteError(t, runCLI(t, srv.URL(), "plan", op, "not-a-ulid"), "(field: planId)")
		}
	})
}

func TestPlanRetryCommand(t *testing.T) {
	t.Parallel()
	kind := &flaky{runs: map[string]int{}}
	kind.broken.Store(true)
	srv := servertest.Start(t, func(k *stagekind.Registry) { require.NoError(t, k.Register("flaky", kind)) })
	file := writePlan(t, "bulk", []string{"br-1", "br-2", "br-3"},
		wire.StageRequest{Name: "first", Kind: "flaky"}, wire.StageRequest{Name: "fragile", Kind: "flaky"})

	r := runCLI(t, srv.URL(), "submit", "-f", file, "--wait", "-o", "json")
	requireCode(t, cli.ExitFailure, r)
	p := decode[wire.Plan](t, r.stdout)
	require.Equal(t, "FAILED", p.Status)
	kind.broken.Store(false)
	// br-3 moves on to another plan: its failed task in p cannot be retried any more.
	requireCode(t, cli.ExitOK, runCLI(t, srv.URL(), "submit", "-f", writePlan(t, "moved", []string{"br-3"}, noop("a")), "--wait"))

	r = runCLI(t, srv.URL(), "plan", "retry", p.PlanID, "--status", "failed", "--from-checkpoint")
	requireCode(t, cli.ExitOK, r)
	assert.Contains(t, r.stdout, "retried 2 task(s), skipped 1")
	lines := strings.Split(r.stdout, "\n")
	var results []string
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) >= 3 && strings.HasPrefix(f[0], "br-") {
			results = append(results, f[0]+" "+f[2])
		}
	}
	assert.ElementsMatch(t, []string{"br-1 retried", "br-2 retried", "br-3 skipped"}, results, "stdout: %s", r.stdout)

	r = runCLI(t, srv.URL(), "plan", "show", p.PlanID, "--watch", "-o", "json")
	requireCode(t, cli.ExitFailure, r) // br-3's task stays FAILED
	for _, id := range []string{"br-1", "br-2"} {
		tk := waitTenant(t, srv.URL(), id, "COMPLETED")
		assert.Equal(t, 2, tk.Attempt)
		assert.Equal(t, 1, kind.count(id+"/first"), "from the checkpoint: %s's first stage did not run again", id)
	}

	r = runCLI(t, srv.URL(), "plan", "retry", p.PlanID, "-o", "json")
	requireCode(t, cli.ExitOK, r)
	out := decode[wire.PlanRetry](t, r.stdout)
	assert.Equal(t, p.PlanID, out.Plan.PlanID)
	assert.Empty(t, out.Retried)
	require.Len(t, out.Skipped, 1, "br-3 is selected again and skipped again")
	assert.NotEmpty(t, out.Skipped[0].Reason)

	requireRemoteError(t, runCLI(t, srv.URL(), "plan", "retry", "01JD0000000000000000000000"), "404")
}

func TestLockCommands(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	p := submitJSON(t, srv.URL(), writePlan(t, "locked", []string{"lk-1"}, sleep("bake", "1m")))
	waitTenant(t, srv.URL(), "lk-1", "RUNNING")

	r := runCLI(t, srv.URL(), "lock", "--tenant", "lk-1", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	l := decode[wire.TenantLock](t, r.stdout)
	assert.True(t, l.Held)
	assert.Regexp(t, `^`+regexp.QuoteMeta(p.PlanID+":"+p.TaskIDs[0])+`@.+$`, l.Owner, "the lease names the task and the executor running it")

	r = runCLI(t, srv.URL(), "lock", "--tenant", "lk-1")
	requireCode(t, cli.ExitOK, r)
	assert.Contains(t, r.stdout, "HELD")
	assert.Contains(t, r.stdout, l.Owner)

	r = runCLI(t, srv.URL(), "unlock", "--tenant", "lk-1")
	requireCode(t, cli.ExitOK, r)
	assert.Contains(t, r.stdout, "PREVIOUS OWNER")
	assert.Contains(t, r.stdout, l.Owner)
	assert.Contains(t, r.stdout, "executor retry --tenant lk-1 --from-checkpoint")
	waitTenant(t, srv.URL(), "lk-1", "INTERRUPTED")

	r = runCLI(t, srv.URL(), "unlock", "--tenant", "lk-1", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	u := decode[wire.TenantUnlock](t, r.stdout)
	assert.False(t, u.Released)
	assert.False(t, u.Interrupted)
	assert.Greater(t, u.Epoch, l.Epoch)

	requireRemoteError(t, runCLI(t, srv.URL(), "lock", "--tenant", "nobody"), "404")
	requireRemoteError(t, runCLI(t, srv.URL(), "unlock", "--tenant", "bad:id"), "(field: tenantId)")
}

// The rollout-control commands send --token like every other: a read token may look at a
// lock but not change anything.
func TestRolloutCommandsSendTheToken(t *testing.T) {
	t.Parallel()
	const (
		readSecret    = "read-secret-0123456789"
		operateSecret = "operate-secret-0123456789"
	)
	srv := servertest.With(t, server.Config{Tokens: []auth.Token{
		{Role: auth.RoleRead, Secret: readSecret}, {Role: auth.RoleOperate, Secret: operateSecret},
	}})
	tests := []struct {
		name  string
		token string
		args  []string
		want  string
	}{
		{"lock without a token", "", []string{"lock", "--tenant", "tk-1"}, "401"},
		{"lock with a read token", readSecret, []string{"lock", "--tenant", "tk-1"}, "404"},
		{"unlock with a read token", readSecret, []string{"unlock", "--tenant", "tk-1"}, "403"},
		{"unlock with an operate token", operateSecret, []string{"unlock", "--tenant", "tk-1"}, "404"},
		{"approve with a read token", readSecret, []string{"approve", "--tenant", "tk-1"}, "403"},
		{"plan retry with an operate token", operateSecret, []string{"plan", "retry", "01JD0000000000000000000000"}, "404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := tt.args
			if tt.token != "" {
				args = append([]string{"--token", tt.token}, args...)
			}
			r := runCLI(t, srv.URL(), args...)
			requireRemoteError(t, r, "error: "+tt.want)
			if tt.token != "" {
				assert.NotContains(t, r.stderr, tt.token, "a secret is never printed")
			}
		})
	}
}
