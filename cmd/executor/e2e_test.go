package main_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// binary is the executor built by TestMain.
var binary string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "executor-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "executor")
	build := exec.Command("go", "build", "-o", binary, "./")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: FAILED to build the executor binary with `go build -o", binary, "./`:", err)
		return 1
	}
	return m.Run()
}

// target is the deployment target of the plan: it counts requests per tenant and stage and
// answers 400 (a permanent failure) to t2 at s3 until fixed.
type target struct {
	fixed atomic.Bool
	mu    sync.Mutex
	hits  map[string]int // "tenant/stage" → requests
	codes map[string][]int
}

func newTarget(t *testing.T) (*target, *httptest.Server) {
	t.Helper()
	tg := &target{hits: map[string]int{}, codes: map[string][]int{}}
	srv := httptest.NewServer(tg)
	t.Cleanup(srv.Close)
	return tg, srv
}

func (tg *target) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := strings.Trim(r.URL.Path, "/")
	code := http.StatusOK
	if key == "t2/s3" && !tg.fixed.Load() {
		code = http.StatusBadRequest
	}
	tg.mu.Lock()
	tg.hits[key]++
	tg.codes[key] = append(tg.codes[key], code)
	tg.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	if code == http.StatusOK {
		_, _ = io.WriteString(w, `{"ok":true}`)
		return
	}
	_, _ = io.WriteString(w, `{"error":"bad config"}`)
}

func (tg *target) count(key string) int {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return tg.hits[key]
}

func (tg *target) statuses(key string) []int {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return append([]int(nil), tg.codes[key]...)
}

// The acceptance scenario: a plan fails for one tenant at a permanent error; the SRE reads
// the tenant's status and checkpoint, fixes the target, retries from the checkpoint, and the
// tenant (and its plan) complete without re-running the stages that had completed.
func TestFailRetryFromCheckpoint(t *testing.T) {
	tg, targetSrv := newTarget(t)

	exe := servertest.Start(t)
	url := exe.URL()

	stages := make([]wire.StageRequest, 4)
	for i := range stages {
		name := fmt.Sprintf("s%d", i+1)
		stages[i] = wire.StageRequest{Name: name, Kind: "http", Timeout: "5s", Params: map[string]any{
			"method": "POST", "url": targetSrv.URL + "/{{.TenantID}}/" + name, "body": `{"tenant":"{{.TenantID}}"}`,
		}}
	}
	plan := wire.PlanRequest{
		Name: "e2e", Stages: stages,
		Tenants: []wire.TenantRequest{{ID: "t1"}, {ID: "t2"}, {ID: "t3"}},
	}
	b, err := json.Marshal(plan)
	require.NoError(t, err)
	planFile := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(planFile, b, 0o600))

	// 1. The plan ends FAILED: exit 1, the JSON plan says so.
	r := runBinary(t, url, "submit", "-f", planFile, "--wait", "-o", "json")
	requireExit(t, 1, r)
	submitted := decode[wire.Plan](t, r.stdout)
	assert.Equal(t, "FAILED", submitted.Status)
	assert.Equal(t, 2, submitted.Progress["COMPLETED"])
	assert.Equal(t, 1, submitted.Progress["FAILED"])

	// 2. t2 failed permanently at s3, after s1 and s2.
	r = runBinary(t, url, "status", "--tenant", "t2", "-o", "json")
	requireExit(t, 0, r)
	task := decode[wire.Task](t, r.stdout)
	assert.Equal(t, "FAILED", task.Status)
	assert.Equal(t, 1, task.Attempt)
	require.NotNil(t, task.LastError)
	assert.Equal(t, "permanent", task.LastError.Class)
	assert.Equal(t, "s3", task.LastError.Stage)
	assert.Equal(t, http.StatusBadRequest, task.LastError.Code)
	require.NotNil(t, task.Checkpoint)
	assert.Equal(t, 1, task.Checkpoint.LastCompletedStageIndex)

	r = runBinary(t, url, "checkpoint", "--tenant", "t2", "-o", "json")
	requireExit(t, 0, r)
	cp := decode[wire.Checkpoint](t, r.stdout)
	assert.Equal(t, []string{"s1", "s2"}, cp.CompletedStages)
	assert.Equal(t, task.TaskID, cp.TaskID)

	r = runBinary(t, url, "plan", "show", submitted.PlanID, "-o", "json")
	requireExit(t, 0, r)
	assert.Equal(t, "FAILED", decode[wire.Plan](t, r.stdout).Status)

	// 3. Fix the target and retry from the checkpoint.
	tg.fixed.Store(true)
	r = runBinary(t, url, "retry", "--tenant", "t2", "--from-checkpoint", "-o", "json")
	requireExit(t, 0, r)
	assert.Equal(t, task.TaskID, decode[wire.Task](t, r.stdout).TaskID)

	var final wire.Task
	require.Eventually(t, func() bool {
		r := runBinary(t, url, "status", "--tenant", "t2", "-o", "json")
		if r.code != 0 {
			return false
		}
		final = decode[wire.Task](t, r.stdout)
		return final.Status == "COMPLETED"
	}, 10*time.Second, 100*time.Millisecond, "t2 never completed after the retry")
	assert.Equal(t, 2, final.Attempt)

	// 4. The retried task reopened its plan, which completes with it.
	r = runBinary(t, url, "plan", "show", submitted.PlanID, "--watch", "-o", "json")
	requireExit(t, 0, r)
	reopened := decode[wire.Plan](t, r.stdout)
	assert.Equal(t, "COMPLETED", reopened.Status)
	assert.Equal(t, 3, reopened.Progress["COMPLETED"])

	// 5. The completed stages did not run again.
	assertT2ResumedAtS3(t, tg)
}

// The binary maps its outcomes to exit statuses: usage 2, remote error 1.
func TestBinaryExitStatuses(t *testing.T) {
	exe := servertest.Start(t)
	tests := []struct {
		name string
		args []string
		want int
	}{
		{name: "help", args: []string{"--help"}, want: 0},
		{name: "plan list", args: []string{"plan", "list"}, want: 0},
		{name: "unknown flag", args: []string{"plan", "list", "--nope"}, want: 2},
		{name: "missing tenant", args: []string{"status"}, want: 2},
		{name: "unknown tenant", args: []string{"status", "--tenant", "ghost"}, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			requireExit(t, tt.want, runBinary(t, exe.URL(), tt.args...))
		})
	}
}

// runWithEnv runs the built executor against serverURL with env added to cleanEnv (so that
// EXECUTOR_TOKEN may be set).
func runWithEnv(t *testing.T, serverURL string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--server", serverURL}, args...)...)
	cmd.Env = append(cleanEnv(), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	timer := time.AfterFunc(cliTimeout, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	_ = cmd.Wait() // a non-zero exit is in ProcessState
	return result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// serve with EXECUTOR_TOKENS: the CLI works with EXECUTOR_TOKEN set to the operate token,
// reads with the read token, and fails clearly (exit 1, the 401 or 403 named) otherwise.
// No secret reaches the server's log.
func TestTokensEndToEnd(t *testing.T) {
	const (
		readSecret    = "e2e-read-0123456789abcdef"
		operateSecret = "e2e-operate-0123456789abcdef"
	)
	// Port 0: the executor picks a free port and logs it (no race for a "free" port).
	p := &executorProc{name: "auth", output: &servertest.Buffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(binary, "serve", "--addr", "127.0.0.1:0")
	p.cmd.Env = append(cleanEnv(), "EXECUTOR_TOKENS=read:"+readSecret+",operate:"+operateSecret, "EXECUTOR_TOKENS_FILE=", "EXECUTOR_INSECURE=")
	p.cmd.Stdout, p.cmd.Stderr = p.output, p.output
	p.cmd.WaitDelay = 5 * time.Second
	require.NoError(t, p.cmd.Start())
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.kill(t)
		if t.Failed() {
			t.Logf("executor output:\n%s", p.output.String())
		}
	})
	require.Eventually(t, func() bool {
		for _, line := range strings.Split(p.output.String(), "\n") {
			var rec struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "executor serving" {
				p.addr = rec.Addr
				return true
			}
		}
		return p.hasExited()
	}, healthTimeout, 10*time.Millisecond, "no 'executor serving' log line")
	require.NotEmpty(t, p.addr, "the executor exited: %s", p.state())
	require.True(t, p.waitHealthy(t), "GET /healthz (public) never answered: %s", p.state())

	planFile := writePlan(t, wire.PlanRequest{Name: "tokens", Stages: []wire.StageRequest{{Name: "noop", Kind: "noop"}},
		Tenants: []wire.TenantRequest{{ID: "tok-a"}, {ID: "tok-b"}}})
	operate := []string{"EXECUTOR_TOKEN=" + operateSecret}
	read := []string{"EXECUTOR_TOKEN=" + readSecret}

	// The operate token submits and reads.
	r := runWithEnv(t, p.URL(), operate, "submit", "-f", planFile, "--wait", "-o", "json")
	requireExit(t, 0, r)
	assert.Equal(t, "COMPLETED", decode[wire.Plan](t, r.stdout).Status)
	r = runWithEnv(t, p.URL(), operate, "status", "--tenant", "tok-a", "-o", "json")
	requireExit(t, 0, r)
	assert.Equal(t, "COMPLETED", decode[wire.Task](t, r.stdout).Status)

	tests := []struct {
		name   string
		env    []string
		args   []string
		code   int
		stderr []string // what the error line names
	}{
		{name: "status without a token", args: []string{"status", "--tenant", "tok-a"}, code: 1, stderr: []string{"401", "EXECUTOR_TOKEN"}},
		{name: "submit without a token", args: []string{"submit", "-f", planFile}, code: 1, stderr: []string{"401", "EXECUTOR_TOKEN"}},
		{name: "status with an unknown token", env: []string{"EXECUTOR_TOKEN=e2e-unknown-0123456789abcdef"}, args: []string{"status", "--tenant", "tok-a"}, code: 1, stderr: []string{"401"}},
		{name: "status with the read token", env: read, args: []string{"status", "--tenant", "tok-b"}, code: 0},
		{name: "a change with the read token", env: read, args: []string{"retry", "--tenant", "tok-b", "--from-checkpoint"}, code: 1, stderr: []string{"403", "operate"}},
		{name: "the token flag", args: []string{"--token", operateSecret, "plan", "list"}, code: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runWithEnv(t, p.URL(), tt.env, tt.args...)
			requireExit(t, tt.code, r)
			for _, s := range tt.stderr {
				assert.Contains(t, r.stderr, s)
			}
			assert.NotContains(t, r.stderr, operateSecret)
		})
	}

	logs := p.output.String()
	assert.Contains(t, logs, "forbidden", "the refused read token was logged")
	for _, secret := range []string{readSecret, operateSecret} {
		assert.NotContains(t, logs, secret, "a secret in the server's log")
	}
}
