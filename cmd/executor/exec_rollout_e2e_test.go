package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/wire"
)

// asyncDeployAPI answers a tenant's deploy 202 {"state":"pending"} twice, then 200
// {"state":"ready"}, recording the version each tenant was deployed with.
type asyncDeployAPI struct {
	mu       sync.Mutex
	calls    map[string]int
	versions map[string]string
}

func (a *asyncDeployAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tenant := strings.TrimPrefix(r.URL.Path, "/deploy/")
	a.mu.Lock()
	a.calls[tenant]++
	n := a.calls[tenant]
	a.versions[tenant] = r.URL.Query().Get("version")
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if n < 3 {
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"state":"pending"}`))
		return
	}
	_, _ = w.Write([]byte(`{"state":"ready"}`))
}

// Issue 32's rollout, with a real executor process: per tenant an exec script that prints a
// per-tenant version as JSON, an async deploy API called with that version and judged by a
// success condition (202 pending, pending, then ready), and an exec smoke test of the
// version. 50 tenants, COMPLETED, the outputs flowing between stages. Then a script that
// outlives its stage's timeout is killed with its child, the stage failing with class timeout.
func TestAnExecAndAsyncAPIRolloutCompletes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"release.sh": `echo "building for $EXECUTOR_TENANT_ID"; echo "{\"version\":\"v-$EXECUTOR_TENANT_ID\"}"`,
		"smoke.sh":   `[ "$1" = "v-$EXECUTOR_TENANT_ID" ] || { echo "wrong version $1" >&2; exit 3; }; echo '{"smoke":"ok"}'`,
		"hang.sh":    `sleep 300 & echo $! > "$1"; wait`,
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	}
	api := &asyncDeployAPI{calls: map[string]int{}, versions: map[string]string{}}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	p := startExecutor(t, "exec-rollout", "", "--exec-allow", dir+"/")

	fast := &wire.RetryRequest{MaxAttempts: 5, InitialBackoff: "10ms", MaxBackoff: "50ms"}
	req := wire.PlanRequest{Name: "exec-rollout", MaxConcurrency: 10, Stages: []wire.StageRequest{
		{Name: "release", Kind: "exec", Params: map[string]any{"command": filepath.Join(dir, "release.sh")}},
		{Name: "deploy", Kind: "http", Retry: fast, Params: map[string]any{
			"method": "POST", "url": srv.URL + `/deploy/{{.TenantID}}?version={{index .Outputs "release" "version"}}`,
			"success": `status == 200 && body.state == "ready"`,
		}},
		{Name: "smoke", Kind: "exec", Params: map[string]any{"command": filepath.Join(dir, "smoke.sh"), "args": []any{`{{index .Outputs "release" "version"}}`}}},
	}}
	for i := range 50 {
		req.Tenants = append(req.Tenants, wire.TenantRequest{ID: fmt.Sprintf("xr-%02d", i)})
	}
	pl := submitJSON(t, p, req)
	assert.Equal(t, "COMPLETED", watchPlan(t, p, pl.PlanID).Status)
	api.mu.Lock()
	for i := range 50 {
		tn := fmt.Sprintf("xr-%02d", i)
		assert.Equal(t, "v-"+tn, api.versions[tn], "the script's output reached the API")
		assert.Equal(t, 3, api.calls[tn], "pending, pending, ready")
	}
	api.mu.Unlock()
	for _, tk := range tasksOf(t, p, pl.PlanID) {
		assert.Equal(t, "COMPLETED", tk.Status)
		assert.Len(t, tk.Attempts, 5, "release, deploy ×3 (two pending), smoke")
	}

	pidFile := filepath.Join(dir, "child")
	hang := wire.PlanRequest{Name: "hang", Stages: []wire.StageRequest{{Name: "hang", Kind: "exec", Timeout: "1s",
		Retry: &wire.RetryRequest{MaxAttempts: 1}, Params: map[string]any{"command": filepath.Join(dir, "hang.sh"), "args": []any{pidFile}, "killGrace": "1s"}}},
		Tenants: []wire.TenantRequest{{ID: "xr-hang"}}}
	hp := submitJSON(t, p, hang)
	r := p.cli(t, "plan", "show", hp.PlanID, "--watch", "-o", "json")
	assert.Equal(t, "FAILED", decode[wire.Plan](t, r.stdout).Status, "%s", r)
	tk := tasksOf(t, p, hp.PlanID)[0]
	require.NotNil(t, tk.LastError)
	assert.Equal(t, "timeout", tk.LastError.Class)
	child, err := strconv.Atoi(strings.TrimSpace(readFile(t, pidFile)))
	require.NoError(t, err)
	assert.Eventually(t, func() bool { return !processAlive(child) }, 5*time.Second, 50*time.Millisecond, "the script's child was killed with it")
}

func submitJSON(t *testing.T, p *executorProc, req wire.PlanRequest) wire.Plan {
	t.Helper()
	b, err := json.Marshal(req)
	require.NoError(t, err)
	resp, err := http.Post(p.URL()+"/v1/plans", "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	defer resp.Body.Close()
	var out wire.Plan
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%+v", out)
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// processAlive reports whether ps lists pid, not as a zombie.
func processAlive(pid int) bool {
	out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
	stat := strings.TrimSpace(string(out))
	return err == nil && stat != "" && !strings.HasPrefix(stat, "Z")
}
