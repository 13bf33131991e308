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

// asyncDeployAPI is a tenant's deploy service: POST /register/<tenant>?version=V records the
// version; POST /deploy/<tenant> starts a deploy and answers 202 {"id"}; GET /status/<id>
// answers {"state":"pending"} twice, then {"state":"ready"}.
type asyncDeployAPI struct {
	mu       sync.Mutex
	deploys  map[string]int // POSTs by tenant
	polls    map[string]int // by deploy id
	versions map[string]string
}

func (a *asyncDeployAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch path := r.URL.Path; {
	case strings.HasPrefix(path, "/register/"):
		a.versions[strings.TrimPrefix(path, "/register/")] = r.URL.Query().Get("version")
		_, _ = w.Write([]byte(`{"registered":true}`))
	case strings.HasPrefix(path, "/deploy/"):
		tenant := strings.TrimPrefix(path, "/deploy/")
		a.deploys[tenant]++
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"id":"dep-` + tenant + `","state":"pending"}`))
	case strings.HasPrefix(path, "/status/"):
		id := strings.TrimPrefix(path, "/status/")
		a.polls[id]++
		if a.polls[id] < 3 {
			_, _ = w.Write([]byte(`{"state":"pending"}`))
			return
		}
		_, _ = w.Write([]byte(`{"state":"ready"}`))
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// Issue 32's rollout, with a real executor process: per tenant an exec script that prints a
// per-tenant version as JSON, an http call registering that version, an async deploy API
// (202, then polled: pending, pending, ready) and an exec smoke test of the version. 50
// tenants, COMPLETED, the outputs flowing between stages, each deploy sent once, and the
// ledger showing the scripts' output. Then a script that outlives its stage's timeout is
// killed with its child, the stage failing with class timeout.
func TestAnExecAndAsyncAPIRolloutCompletes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"release.sh": `echo "building for $EXECUTOR_TENANT_ID"; echo "helm upgrade $EXECUTOR_TENANT_ID" >&2; echo "{\"version\":\"v-$EXECUTOR_TENANT_ID\"}"`,
		"smoke.sh":   `[ "$1" = "v-$EXECUTOR_TENANT_ID" ] || { echo "wrong version $1" >&2; exit 3; }; echo '{"smoke":"ok"}'`,
		"hang.sh":    `sleep 300 & echo $! > "$1"; wait`,
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	}
	api := &asyncDeployAPI{deploys: map[string]int{}, polls: map[string]int{}, versions: map[string]string{}}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	p := startExecutor(t, "exec-rollout", "", "--exec-allow", dir+"/")

	version := `{{index .Outputs "release" "version"}}`
	req := wire.PlanRequest{Name: "exec-rollout", MaxConcurrency: 10, Stages: []wire.StageRequest{
		{Name: "release", Kind: "exec", Params: map[string]any{"command": "release.sh"}},
		{Name: "register", Kind: "http", Params: map[string]any{"method": "POST", "url": srv.URL + `/register/{{.TenantID}}?version=` + version}},
		{Name: "deploy", Kind: "http", Timeout: "1m", Params: map[string]any{
			"method": "POST", "url": srv.URL + `/deploy/{{.TenantID}}`, "success": "status == 202",
			"poll": map[string]any{"url": srv.URL + "/status/{{.Response.body.id}}", "interval": "100ms", "until": `body.state == "ready"`},
		}},
		{Name: "smoke", Kind: "exec", Params: map[string]any{"command": filepath.Join(dir, "smoke.sh"), "args": []any{version}}},
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
		assert.Equal(t, 1, api.deploys[tn], "one deploy per tenant")
		assert.Equal(t, 3, api.polls["dep-"+tn], "pending, pending, ready")
	}
	api.mu.Unlock()
	for i, tk := range tasksOf(t, p, pl.PlanID) {
		assert.Equal(t, "COMPLETED", tk.Status)
		require.Len(t, tk.Attempts, 4, "release, register, deploy (polled within its attempt), smoke")
		if i%10 != 0 {
			continue
		}
		r := p.cli(t, "task", "show", tk.TaskID, "-o", "json")
		requireExit(t, 0, r)
		full := decode[wire.Task](t, r.stdout)
		assert.Contains(t, full.Attempts[0].Stdout, "building for "+tk.TenantID, "the ledger shows the script's stdout")
		assert.Contains(t, full.Attempts[0].Stderr, "helm upgrade "+tk.TenantID, "and its stderr")
		assert.Contains(t, full.Attempts[3].Stdout, `{"smoke":"ok"}`)
		r = p.cli(t, "checkpoint", "--tenant", tk.TenantID, "-o", "json")
		requireExit(t, 0, r)
		cp := decode[wire.Checkpoint](t, r.stdout)
		assert.JSONEq(t, `{"state":"ready"}`, string(cp.ContextData["deploy"]), "the deploy's output is the last poll's body")
		assert.Nil(t, cp.Progress)
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
