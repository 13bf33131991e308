package main_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/wire"
)

// Exit codes and stops of exec stages, through a real executor process: a script that exits
// 75 is retried under the stage's policy (and then succeeds), one that exits with a code
// listed in permanentExitCodes fails at once, and an operator's cancel of a running exec stage
// kills the script and its child within the kill grace.
func TestExecExitCodesAndCancelThroughTheExecutor(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, body := range map[string]string{
		// exits 75 (EX_TEMPFAIL) on its first run for a tenant, then succeeds
		"flaky.sh":  `m="$1/$EXECUTOR_TENANT_ID"; if [ ! -e "$m" ]; then : > "$m"; echo "cluster busy" >&2; exit 75; fi; echo '{"ok":true}'`,
		"broken.sh": `echo "chart not found" >&2; exit 2`,
		"hang.sh":   `trap '' TERM; sleep 300 & echo $! > "$1"; while :; do sleep 1; done`,
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	}
	marks := t.TempDir()
	p := startExecutor(t, "exec-faults", "", "--exec-allow", dir+"/")
	retry := &wire.RetryRequest{MaxAttempts: 3, InitialBackoff: "10ms", MaxBackoff: "50ms"}

	flaky := submitJSON(t, p, wire.PlanRequest{Name: "flaky", Stages: []wire.StageRequest{{Name: "release", Kind: "exec", Retry: retry,
		Params: map[string]any{"command": "flaky.sh", "args": []any{marks}, "permanentExitCodes": []any{2}}}},
		Tenants: []wire.TenantRequest{{ID: "ef-flaky"}}})
	assert.Equal(t, "COMPLETED", watchPlan(t, p, flaky.PlanID).Status)
	tk := tasksOf(t, p, flaky.PlanID)[0]
	require.Len(t, tk.Attempts, 2, "exit 75, retried, then exit 0")
	assert.Equal(t, "failed", tk.Attempts[0].Outcome)
	assert.Equal(t, "retryable", tk.Attempts[0].Class)
	assert.Contains(t, tk.Attempts[0].Error, "exited 75")
	assert.Equal(t, "succeeded", tk.Attempts[1].Outcome)

	broken := submitJSON(t, p, wire.PlanRequest{Name: "broken", Stages: []wire.StageRequest{{Name: "release", Kind: "exec", Retry: retry,
		Params: map[string]any{"command": "broken.sh", "permanentExitCodes": []any{2}}}},
		Tenants: []wire.TenantRequest{{ID: "ef-broken"}}})
	r := p.cli(t, "plan", "show", broken.PlanID, "--watch", "-o", "json")
	assert.Equal(t, "FAILED", decode[wire.Plan](t, r.stdout).Status, "%s", r)
	tk = tasksOf(t, p, broken.PlanID)[0]
	require.Len(t, tk.Attempts, 1, "a listed exit code is not retried")
	require.NotNil(t, tk.LastError)
	assert.Equal(t, "permanent", tk.LastError.Class)
	assert.Contains(t, tk.LastError.Message, "chart not found")

	pidFile := filepath.Join(dir, "child")
	hang := submitJSON(t, p, wire.PlanRequest{Name: "hang", Stages: []wire.StageRequest{{Name: "hang", Kind: "exec",
		Params: map[string]any{"command": "hang.sh", "args": []any{pidFile}, "killGrace": "1s"}}},
		Tenants: []wire.TenantRequest{{ID: "ef-hang"}}})
	var child int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		child, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, pollTimeout, 20*time.Millisecond, "the script started")
	require.True(t, processAlive(child))
	cancelled := time.Now()
	requireExit(t, 0, p.cli(t, "cancel", "--tenant", "ef-hang"))
	require.Eventually(t, func() bool { return !processAlive(child) }, 10*time.Second, 20*time.Millisecond,
		"the cancelled script's child outlived its attempt")
	gone := time.Since(cancelled)
	t.Logf("the cancelled script's child was gone %v after the cancel (kill grace 1s, the script ignores SIGTERM)", gone.Round(10*time.Millisecond))
	assert.Less(t, gone, 5*time.Second, "killed within the grace period, with room for a busy machine")
	r = p.cli(t, "plan", "show", hang.PlanID, "--watch", "-o", "json")
	assert.Equal(t, "CANCELLED", decode[wire.Plan](t, r.stdout).Status, "%s", r)
}
