package server_test

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/stagekind"
	"github.com/executor-dev/executor/wire"
)

// A shared executor cut off from Redis self-fences its runs before their leases can expire:
// an exec stage's whole process group is killed then, so no script of the tenant goes on
// while another executor may take it over (issue 31's promise, for issue 32's exec kind).
func TestASelfFencedRunKillsItsExecProcessGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hang.sh"),
		[]byte("#!/bin/sh\nsleep 300 & echo $! > \"$1\"; wait\n"), 0o755))
	allow, err := stagekind.ParseExecAllow([]string{dir + "/"})
	require.NoError(t, err)
	rs := redistest.Start(t)
	proxy := rs.NewFaultProxy(redistest.Faults{})
	c := newDGClient(t, servertest.With(t, server.Config{RedisURL: proxy.URL(), LeaseTTL: 2 * time.Second, ExecAllow: allow, Logger: dgLogger()}))

	req := wire.PlanRequest{Name: "fence", Stages: []wire.StageRequest{{Name: "hang", Kind: "exec",
		Params: map[string]any{"command": filepath.Join(dir, "hang.sh"), "args": []any{pidFile}, "killGrace": "200ms"}}},
		Tenants: []wire.TenantRequest{{ID: "xf-1"}}}
	var p wire.Plan
	require.Equal(t, http.StatusCreated, c.do(http.MethodPost, "/v1/plans", req, &p).StatusCode)
	var child int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		child, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, dgReady, 20*time.Millisecond, "the script started")
	require.True(t, psAlive(child))

	proxy.Cut()
	cut := time.Now()
	require.Eventually(t, func() bool { return !psAlive(child) }, 10*time.Second, 20*time.Millisecond,
		"the script's process group outlived its run's self-fencing lease")
	t.Logf("the script's child was gone %v after the cut (lease TTL 2s)", time.Since(cut).Round(10*time.Millisecond))
	// Before another executor could judge the run gone (a lease TTL and its margin after the
	// last refresh), with room for a busy machine.
	assert.Less(t, time.Since(cut), 2*2*time.Second, "killed at the self-fencing deadline")
}

// psAlive reports whether ps lists pid, not as a zombie.
func psAlive(pid int) bool {
	out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
	stat := strings.TrimSpace(string(out))
	return err == nil && stat != "" && !strings.HasPrefix(stat, "Z")
}
