package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/wire"
)

// runRollback runs `executor rollback args...` against url with -o output, through the
// command rollbackCmd builds (newRoot adds it under the root), and returns what it printed
// and its error (run turns it into the exit status, as for every command).
func runRollback(t *testing.T, url, output string, args ...string) (outcome, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	a := &invocation{streams: streams{stdout: &stdout, stderr: &stderr, getenv: envOf(nil)}, server: url, output: output}
	cmd := a.rollbackCmd()
	cmd.SetArgs(args)
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.ExecuteContext(ctx)
	return outcome{stdout: stdout.String(), stderr: stderr.String()}, err
}

// waitStatus polls `status --tenant` until the task has status (bounded).
func waitStatus(t *testing.T, url, tenant, status string) wire.Task {
	t.Helper()
	var last wire.Task
	require.Eventually(t, func() bool {
		o := runWith(t, "", nil, "--server", url, "status", "--tenant", tenant, "-o", "json")
		if o.code != ExitOK {
			return false
		}
		require.NoError(t, json.Unmarshal([]byte(o.stdout), &last))
		return last.Status == status
	}, 10*time.Second, 50*time.Millisecond, "tenant %s never reached %s", tenant, status)
	return last
}

// rollback --tenant rolls a COMPLETED task back: it prints the task, PENDING, rolling back
// from its newest stage (undo:after); on a PAUSED plan stderr says it starts once the plan is
// resumed. Resumed, it undoes after and push (the gate has no undo) and ends ROLLED_BACK,
// which status and task show tell; a ROLLED_BACK task cannot be rolled back again (409).
func TestRollbackTenantCommand(t *testing.T) {
	t.Parallel()
	url := startTestServer(t)
	withUndo := func(s wire.StageRequest) wire.StageRequest { s.Undo = &wire.StageRequest{Kind: "noop"}; return s }
	req := wire.PlanRequest{
		Name: "rollback-tenant",
		Stages: []wire.StageRequest{
			withUndo(wire.StageRequest{Name: "push", Kind: "noop"}),
			{Name: "gate", Kind: "approval", Params: map[string]any{"message": "go?"}},
			withUndo(wire.StageRequest{Name: "after", Kind: "noop"}),
		},
		Tenants: []wire.TenantRequest{{ID: "rbt-1"}, {ID: "rbt-2"}},
	}
	b, err := json.Marshal(req)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(file, b, 0o600))
	o := runWith(t, "", nil, "--server", url, "submit", "-f", file, "-o", "json")
	require.Equal(t, ExitOK, o.code, o.stderr)
	var p wire.Plan
	require.NoError(t, json.Unmarshal([]byte(o.stdout), &p))
	waitStatus(t, url, "rbt-1", "WAITING")
	waitStatus(t, url, "rbt-2", "WAITING")
	require.Equal(t, ExitOK, runWith(t, "", nil, "--server", url, "approve", "--tenant", "rbt-1").code)
	waitStatus(t, url, "rbt-1", "COMPLETED")
	require.Equal(t, ExitOK, runWith(t, "", nil, "--server", url, "plan", "pause", p.PlanID).code, "rbt-2 keeps the plan open")

	out, err := runRollback(t, url, OutputTable, "--tenant", "rbt-1")
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^rbt-1\s+\S+\s+PENDING\s+2\s+undo:after \(3/3\)\s`, out.stdout)
	assert.Contains(t, out.stdout, "\nrolling back: 3 of 3 stage(s) still applied, undone newest first\n")
	assert.Equal(t, fmt.Sprintf("plan %s is PAUSED: the rollback starts once it is resumed: executor plan resume %s\n", p.PlanID, p.PlanID), out.stderr)

	require.Equal(t, ExitOK, runWith(t, "", nil, "--server", url, "plan", "resume", p.PlanID).code)
	tk := waitStatus(t, url, "rbt-1", "ROLLED_BACK")
	assert.True(t, tk.RollingBack)
	o = runWith(t, "", nil, "--server", url, "status", "--tenant", "rbt-1")
	require.Equal(t, ExitOK, o.code, o.stderr)
	assert.Regexp(t, `(?m)^rbt-1\s+\S+\s+ROLLED_BACK\s+2\s+undone \(0/3\)\s`, o.stdout)
	assert.Contains(t, o.stdout, "\nrolled back: every stage it completed is undone (or, without an undo, passed over); 'executor retry --tenant rbt-1' runs it forward again\n")
	o = runWith(t, "", nil, "--server", url, "task", "show", tk.TaskID)
	require.Equal(t, ExitOK, o.code, o.stderr)
	assert.Regexp(t, `(?m)^2 after\s+1\s+1\s+succeeded`, o.stdout)
	assert.Regexp(t, `(?m)^2 undo:after\s+2\s+1\s+succeeded`, o.stdout)
	assert.Regexp(t, `(?m)^0 undo:push\s+2\s+1\s+succeeded`, o.stdout)
	assert.NotContains(t, o.stdout, "undo:gate", "a stage without an undo is passed over")

	// ROLLED_BACK is not a status a rollback starts from; --tenant is required.
	_, err = runRollback(t, url, OutputJSON, "--tenant", "rbt-1")
	require.Error(t, err)
	assert.Equal(t, 409, client.StatusCode(err), "%v", err)
	_, err = runRollback(t, url, OutputTable)
	var ue *usageError
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, err.Error(), "required flag --tenant is missing")

	// A WAITING task is refused too: it holds its run.
	_, err = runRollback(t, url, OutputJSON, "--tenant", "rbt-2")
	assert.Equal(t, 409, client.StatusCode(err), "%v", err)
}
