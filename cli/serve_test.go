package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// serve --help lists serve's own flags, not the client commands' global ones; a client
// command's help still lists them.
func TestServeHelpListsOnlyServeFlags(t *testing.T) {
	t.Parallel()
	o := runWith(t, "", nil, "serve", "--help")
	require.Equal(t, ExitOK, o.code, o.stderr)
	for _, flag := range []string{"--addr", "--redis", "--topology", "--log-level", "--shutdown-timeout", "--help"} {
		assert.Contains(t, o.stdout, flag)
	}
	for _, flag := range []string{"--server ", "--token ", "--output ", "Global Flags"} {
		assert.NotContains(t, o.stdout, flag)
	}

	o = runWith(t, "", nil, "plan", "list", "--help")
	require.Equal(t, ExitOK, o.code, o.stderr)
	assert.Contains(t, o.stdout, "--server ")
	assert.Contains(t, o.stdout, "--token ")
}

// serveLogs runs serve with args and env until one noop plan completed, and returns its
// stderr (the log).
func serveLogs(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr servertest.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...),
			streams{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: envOf(env)})
	}()
	var addr string
	require.Eventually(t, func() bool {
		for line := range strings.Lines(stderr.String()) {
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "executor serving" {
				addr, _ = rec["addr"].(string)
			}
		}
		return addr != ""
	}, 10*time.Second, 10*time.Millisecond, "serve did not serve; stderr: %s", stderr.String())

	body, err := json.Marshal(wire.PlanRequest{Name: "levels", Stages: []wire.StageRequest{{Name: "one", Kind: "noop"}},
		Tenants: []wire.TenantRequest{{ID: "lv-1"}}})
	require.NoError(t, err)
	resp, err := http.Post("http://"+addr+"/v1/plans", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	var p wire.Plan
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&p))
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	c := client.New("http://"+addr, "", nil)
	require.Eventually(t, func() bool {
		got, err := c.Plan(ctx, p.PlanID, 0)
		return err == nil && got.Status == "COMPLETED"
	}, 10*time.Second, 10*time.Millisecond)
	cancel()
	select {
	case c := <-code:
		require.Equal(t, ExitOK, c, stderr.String())
	case <-time.After(35 * time.Second):
		require.FailNow(t, "serve did not stop")
	}
	return stderr.String()
}

// --log-level (or EXECUTOR_LOG_LEVEL) debug shows the documented debug lines ("stage
// completed"); the default, info, does not.
func TestServeLogLevel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		env       map[string]string
		args      []string
		wantDebug bool
	}{
		{name: "default info", wantDebug: false},
		{name: "flag debug", args: []string{"--log-level", "debug"}, wantDebug: true},
		{name: "env debug", env: map[string]string{EnvLogLevel: "DEBUG"}, wantDebug: true},
		{name: "flag beats env", env: map[string]string{EnvLogLevel: "debug"}, args: []string{"--log-level", "info"}, wantDebug: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			logs := serveLogs(t, tt.env, tt.args...)
			require.Contains(t, logs, `"msg":"executor serving"`, "precondition: info lines are logged")
			assert.Equal(t, tt.wantDebug, strings.Contains(logs, `"msg":"stage completed"`), logs)
			assert.Equal(t, tt.wantDebug, strings.Contains(logs, `"level":"DEBUG"`), logs)
		})
	}
}

func TestServeLogLevelRefusesUnknownLevels(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"serve", "--log-level", "verbose"}, {"serve", "--log-level", "info+2"}} {
		o := runWith(t, "", nil, args...)
		assert.Equal(t, ExitUsage, o.code, o.stderr)
		assert.Contains(t, o.stderr, "--log-level")
	}
	o := runWith(t, "", map[string]string{EnvLogLevel: "loud"}, "serve")
	assert.Equal(t, ExitUsage, o.code, o.stderr)
	assert.Contains(t, o.stderr, "--log-level")
}
