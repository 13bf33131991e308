package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
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

	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// cliTimeout bounds one run of a client command, so that no test hangs on one.
const cliTimeout = 60 * time.Second

type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
}

// cleanEnv is the environment of the binary: the test's, without any EXECUTOR_* setting
// that could redirect it (an empty value counts as unset).
func cleanEnv() []string {
	return append(os.Environ(),
		"EXECUTOR_SERVER=", "EXECUTOR_TOKEN=", "EXECUTOR_ADDR=", "EXECUTOR_WORKERS=",
		"EXECUTOR_REDIS_URL=", "EXECUTOR_PREFIX=", "EXECUTOR_LEASE_TTL=")
}

// runCLI runs the built executor against serverURL. It does not touch t, so it may run on
// any goroutine; an error means the binary could not be run at all (not a non-zero exit).
func runCLI(serverURL string, args ...string) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, append([]string{"--server", serverURL}, args...)...)
	cmd.Env = cleanEnv()
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return r, fmt.Errorf("executor %v: no answer within %s: %w", args, cliTimeout, ctx.Err())
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	default:
		return r, fmt.Errorf("executor %v: %w", args, err)
	}
	return r, nil
}

// runBinary runs the built executor against serverURL.
func runBinary(t *testing.T, serverURL string, args ...string) result {
	t.Helper()
	r, err := runCLI(serverURL, args...)
	require.NoError(t, err, "running %v\n%s", args, r)
	return r
}

func requireExit(t *testing.T, want int, r result) {
	t.Helper()
	require.Equal(t, want, r.code, "exit status\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
}

func decode[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal([]byte(s), &v), "not the expected JSON: %s", s)
	return v
}

// writePlan writes a plan submission to a temporary file and returns its path.
func writePlan(t *testing.T, p wire.PlanRequest) string {
	t.Helper()
	b, err := json.Marshal(p)
	require.NoError(t, err)
	f := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(f, b, 0o600))
	return f
}

// httpStages returns http stages named names, each POSTing to base/<tenant>/<name>.
func httpStages(base, timeout string, names ...string) []wire.StageRequest {
	stages := make([]wire.StageRequest, len(names))
	for i, name := range names {
		stages[i] = wire.StageRequest{Name: name, Kind: "http", Timeout: timeout, Params: map[string]any{
			"method": "POST", "url": base + "/{{.TenantID}}/" + name, "body": `{"tenant":"{{.TenantID}}"}`,
		}}
	}
	return stages
}

// executorProc is a real `executor serve` process, owned by one test.
type executorProc struct {
	name   string
	addr   string
	cmd    *exec.Cmd
	output *servertest.Buffer // its stderr (logs) and stdout
	exited chan struct{}      // closed once Wait returned
	err    error              // Wait's error, read only after exited closed
	killMu sync.Mutex         // serialises kill
	killed bool
}

// Limits of an executor process, and the lease TTL it runs with.
const (
	healthTimeout = 10 * time.Second // start until GET /healthz answers
	killTimeout   = 10 * time.Second // SIGKILL until the process is reaped
	leaseTTL      = 2 * time.Second  // --lease-ttl
)

// startExecutor starts `executor serve --redis redisURL --addr 127.0.0.1:<free port>
// --lease-ttl 2s [extra...]` and waits until GET /healthz answers. The process is killed when the test
// ends; its logs are printed if the test failed.
func startExecutor(t *testing.T, name, redisURL string, extra ...string) *executorProc {
	t.Helper()
	return startRetrying(t, name, func() *executorProc { return spawnExecutor(t, name, redisURL, extra...) })
}

// startRetrying starts an executor with spawn and waits until it is healthy, spawning it
// again (on another free port) when it lost the race for its port.
func startRetrying(t *testing.T, name string, spawn func() *executorProc) *executorProc {
	t.Helper()
	var last *executorProc
	for try := 0; try < 3; try++ {
		p := spawn()
		if p.waitHealthy(t) {
			t.Logf("%s: executor serving on %s (pid %d)", name, p.addr, p.cmd.Process.Pid)
			return p
		}
		last = p
		if !strings.Contains(p.output.String(), "address already in use") {
			break // not a lost race for the free port: retrying will not help
		}
	}
	require.FailNowf(t, "executor did not become healthy",
		"%s on %s: GET /healthz did not answer 200 within %s (%s)\noutput:\n%s",
		name, last.addr, healthTimeout, last.state(), last.output.String())
	return nil
}

func spawnExecutor(t *testing.T, name, redisURL string, extra ...string) *executorProc {
	t.Helper()
	p := &executorProc{
		name:   name,
		addr:   "127.0.0.1:" + strconv.Itoa(freePort(t)),
		output: &servertest.Buffer{},
		exited: make(chan struct{}),
	}
	p.cmd = exec.Command(binary, append([]string{"serve",
		"--redis", redisURL, "--addr", p.addr, "--lease-ttl", leaseTTL.String()}, extra...)...)
	p.cmd.Env = cleanEnv()
	p.cmd.Stdout, p.cmd.Stderr = p.output, p.output
	p.cmd.WaitDelay = 5 * time.Second
	require.NoError(t, p.cmd.Start(), "%s: start %s", name, binary)
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.kill(t)
		if t.Failed() {
			t.Logf("%s (%s) output:\n%s", p.name, p.addr, p.output.String())
		}
	})
	return p
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// waitHealthy polls GET /healthz until it answers 200 (true), the process exits or
// healthTimeout passes (false).
func (p *executorProc) waitHealthy(t *testing.T) bool {
	t.Helper()
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(healthTimeout)
	for time.Now().Before(deadline) {
		if p.hasExited() {
			return false
		}
		resp, err := client.Get(p.URL() + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	return false
}

func (p *executorProc) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// state describes whether the process still runs.
func (p *executorProc) state() string {
	if p.hasExited() {
		return fmt.Sprintf("exited: %v", p.err)
	}
	return "still running"
}

// URL is the process's HTTP base URL, the CLI's --server.
func (p *executorProc) URL() string { return "http://" + p.addr }

// kill sends SIGKILL (kill -9) and waits until the process is gone. Killing a dead process
// is a no-op.
func (p *executorProc) kill(t *testing.T) {
	t.Helper()
	p.killMu.Lock()
	defer p.killMu.Unlock()
	if p.killed {
		return
	}
	p.killed = true
	if !p.hasExited() {
		_ = p.cmd.Process.Kill()
	}
	select {
	case <-p.exited:
	case <-time.After(killTimeout):
		t.Errorf("%s (pid %d): still running %s after SIGKILL", p.name, p.cmd.Process.Pid, killTimeout)
	}
}

// cli runs a client command against this process.
func (p *executorProc) cli(t *testing.T, args ...string) result {
	t.Helper()
	return runBinary(t, p.URL(), args...)
}

// assertT2ResumedAtS3 checks the fail-at-s3 scenario's target: t2's completed stages s1 and
// s2 ran once, s3 twice (refused, then accepted after the retry), s4 once; t1 and t3 ran
// every stage once.
func assertT2ResumedAtS3(t *testing.T, tg *target) {
	t.Helper()
	assert.Equal(t, 1, tg.count("t2/s1"))
	assert.Equal(t, 1, tg.count("t2/s2"))
	assert.Equal(t, []int{http.StatusBadRequest, http.StatusOK}, tg.statuses("t2/s3"))
	assert.Equal(t, 1, tg.count("t2/s4"))
	for _, tenant := range []string{"t1", "t3"} {
		for i := 1; i <= 4; i++ {
			key := fmt.Sprintf("%s/s%d", tenant, i)
			assert.Equal(t, 1, tg.count(key), key)
		}
	}
}
