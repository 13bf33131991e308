package stagekind_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/stagekind"
)

// script writes an executable shell script into dir and returns its path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	return path
}

// execKind is the exec kind allowing every command under dir.
func execKind(t *testing.T, dir string, opts stagekind.ExecOptions) *stagekind.Exec {
	t.Helper()
	allow, err := stagekind.ParseExecAllow([]string{dir + "/"})
	require.NoError(t, err)
	opts.Allow = allow
	return stagekind.NewExec(opts)
}

func execRequest(params map[string]any) stage.Request {
	return stage.Request{PlanID: "p1", TaskID: "t1", TenantID: "acme", Stage: "deploy", Run: 1, Attempt: 2, Fence: 7, Params: params}
}

// alive reports whether pid is a live process (ps lists it, and not as a zombie).
func alive(t *testing.T, pid int) bool {
	t.Helper()
	out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
	if err != nil { // ps exits 1 when it lists nothing
		return false
	}
	stat := strings.TrimSpace(string(out))
	return stat != "" && !strings.HasPrefix(stat, "Z")
}

// pidIn reads the pid a script wrote to path.
func pidIn(t *testing.T, path string) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, 5*time.Second, 10*time.Millisecond, "the script wrote its child's pid")
	return pid
}

func TestExecOutputIsTheLastJSONLineOfStdout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := script(t, dir, "deploy.sh", `read line
echo "deploying $1 in $(pwd)"
echo "{\"tenant\":\"$EXECUTOR_TENANT_ID\",\"arg\":\"$1\",\"stdin\":\"$line\",\"var\":\"$COLOR\"}"
echo`)
	out, err := execKind(t, dir, stagekind.ExecOptions{}).Run(context.Background(), execRequest(map[string]any{
		"command": cmd, "args": []any{"v2"}, "env": map[string]any{"COLOR": "blue"}, "dir": dir, "stdin": "hello\n",
	}))
	require.NoError(t, err)
	assert.JSONEq(t, `{"tenant":"acme","arg":"v2","stdin":"hello","var":"blue"}`, string(out))

	out, err = execKind(t, dir, stagekind.ExecOptions{}).Run(context.Background(), execRequest(map[string]any{
		"command": script(t, dir, "plain.sh", `echo done`),
	}))
	require.NoError(t, err)
	assert.Nil(t, out, "a last line that is not a JSON object outputs null")
}

// The command gets PATH, HOME, what ExecOptions.Env names and the EXECUTOR_ variables, and
// nothing else of the executor's environment.
func TestExecPassesOnlyTheAllowedEnvironment(t *testing.T) {
	t.Setenv("EXECUTOR_TEST_SECRET", "s3cret")
	t.Setenv("EXECUTOR_TEST_PASSED", "yes")
	dir := t.TempDir()
	cmd := script(t, dir, "env.sh", `printf '{"secret":"%s","passed":"%s","home":"%s","fence":"%s","key":"%s","attempt":"%s","stage":"%s"}\n' \
  "$EXECUTOR_TEST_SECRET" "$EXECUTOR_TEST_PASSED" "$HOME" "$EXECUTOR_FENCE" "$EXECUTOR_IDEMPOTENCY_KEY" "$EXECUTOR_ATTEMPT" "$EXECUTOR_STAGE"`)
	out, err := execKind(t, dir, stagekind.ExecOptions{Env: []string{"EXECUTOR_TEST_PASSED"}}).Run(context.Background(),
		execRequest(map[string]any{"command": cmd}))
	require.NoError(t, err)
	var got map[string]string
	require.NoError(t, json.Unmarshal(out, &got))
	assert.Empty(t, got["secret"], "the executor's environment is not passed down")
	assert.Equal(t, "yes", got["passed"])
	assert.Equal(t, os.Getenv("HOME"), got["home"])
	assert.Equal(t, "acme:7", got["fence"])
	assert.Equal(t, "p1/t1/deploy/1", got["key"])
	assert.Equal(t, "2", got["attempt"])
	assert.Equal(t, "deploy", got["stage"])
}

func TestExecExitCodes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name      string
		code      int
		permanent []any
		class     stage.Class
	}{
		{"a non-zero exit retries", 75, nil, stage.ClassRetryable},
		{"a listed exit fails at once", 3, []any{float64(3), 4}, stage.ClassPermanent},
		{"an exit not listed retries", 5, []any{3}, stage.ClassRetryable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cmd := script(t, dir, "exit"+strconv.Itoa(tt.code)+".sh", `echo "cannot reach the cluster" >&2; exit `+strconv.Itoa(tt.code))
			params := map[string]any{"command": cmd}
			if tt.permanent != nil {
				params["permanentExitCodes"] = tt.permanent
			}
			_, err := execKind(t, dir, stagekind.ExecOptions{}).Run(context.Background(), execRequest(params))
			se := stage.AsError(err)
			assert.Equal(t, tt.class, se.Class)
			assert.Contains(t, se.Message, "exited "+strconv.Itoa(tt.code))
			assert.Contains(t, se.Message, "stderr: cannot reach the cluster", "the failure carries stderr's tail")
		})
	}
}

// When the attempt's context ends (its timeout here), the command's whole process group is
// stopped: SIGTERM, then SIGKILL after killGrace for one that ignores it; nothing it started
// outlives it.
func TestExecKillsItsProcessGroupWhenTheAttemptEnds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name, body string
	}{
		{"it stops on SIGTERM", `sleep 300 & echo $! > "$1"; wait`},
		{"it ignores SIGTERM", `trap '' TERM; sleep 300 & echo $! > "$1"; while :; do sleep 1; done`},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(dir, "child"+strconv.Itoa(i))
			cmd := script(t, dir, "hang"+strconv.Itoa(i)+".sh", tt.body)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := execKind(t, dir, stagekind.ExecOptions{}).Run(ctx, execRequest(map[string]any{
					"command": cmd, "args": []any{pidFile}, "killGrace": "300ms",
				}))
				done <- err
			}()
			child := pidIn(t, pidFile)
			require.True(t, alive(t, child))
			cancel()
			select {
			case err := <-done:
				require.ErrorIs(t, err, context.Canceled)
			case <-time.After(20 * time.Second):
				t.Fatal("the command outlived its attempt's cancel and its kill grace")
			}
			assert.Eventually(t, func() bool { return !alive(t, child) }, 5*time.Second, 20*time.Millisecond, "its child was killed too")
		})
	}
}

// A command that exits leaving a background process behind: the process is killed, and the
// attempt does not wait for it (it holds stdout open).
func TestExecKillsWhatACommandLeavesBehind(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "left")
	cmd := script(t, dir, "leave.sh", `sleep 300 & echo $! > "$1"; echo '{"ok":true}'`)
	out, err := execKind(t, dir, stagekind.ExecOptions{}).Run(context.Background(), execRequest(map[string]any{
		"command": cmd, "args": []any{pidFile},
	}))
	require.NoError(t, err)
	assert.JSONEq(t, `{"ok":true}`, string(out))
	child := pidIn(t, pidFile)
	assert.Eventually(t, func() bool { return !alive(t, child) }, 5*time.Second, 20*time.Millisecond, "what it left behind was killed")
}

// A process that left the command's group (setsid) and holds its stdout open keeps the pipe
// from ending: the attempt does not wait for it, nor take what was read for the whole output.
// It fails, retryable, saying so; the process is not the executor's to kill (it left).
func TestExecOutputNotReadToTheEndIsNeverTakenForTheWhole(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "escaped")
	cmd := script(t, dir, "escape.sh", `echo '{"ok":true}'; setsid sh -c 'echo $$ > "$1"; exec sleep 30' sh "$1" &
while [ ! -s "$1" ]; do sleep 0.01; done`)
	start := time.Now()
	_, err := execKind(t, dir, stagekind.ExecOptions{}).Run(context.Background(), execRequest(map[string]any{
		"command": cmd, "args": []any{pidFile},
	}))
	t.Cleanup(func() {
		if b, rerr := os.ReadFile(pidFile); rerr == nil {
			if pid, cerr := strconv.Atoi(strings.TrimSpace(string(b))); cerr == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	var se *stage.Error
	require.ErrorAs(t, err, &se, "an output whose pipe never ended is no output")
	assert.Equal(t, stage.ClassRetryable, se.Class)
	assert.Contains(t, se.Message, "could not be read to the end")
	assert.Less(t, time.Since(start), 20*time.Second, "the attempt did not wait for the escaped process (sleep 30)")
}

func TestExecOutputLineLongerThanTheCapFailsPermanently(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := script(t, dir, "big.sh", `printf '{"x":"'; i=0; while [ $i -lt 100 ]; do printf 'aaaaaaaaaa'; i=$((i+1)); done; printf '"}\n'`)
	_, err := execKind(t, dir, stagekind.ExecOptions{MaxOutputBytes: 256}).Run(context.Background(), execRequest(map[string]any{"command": cmd}))
	assert.Equal(t, stage.ClassPermanent, stage.AsError(err).Class)
}

func TestExecParamsAreChecked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := script(t, dir, "ok.sh", `true`)
	tests := []struct {
		name   string
		kind   *stagekind.Exec
		params map[string]any
		field  string
		denied bool
	}{
		{"disabled", stagekind.NewExec(stagekind.ExecOptions{}), map[string]any{"command": cmd}, "command", true},
		{"not allowed", execKind(t, dir, stagekind.ExecOptions{}), map[string]any{"command": "/bin/sh"}, "command", true},
		{"relative", execKind(t, dir, stagekind.ExecOptions{}), map[string]any{"command": "./ok.sh"}, "command", true},
		{"a name in no allowed directory", execKind(t, dir, stagekind.ExecOptions{}), map[string]any{"command": "sh"}, "command", true},
		{"escaping the directory", execKind(t, dir, stagekind.ExecOptions{}), map[string]any{"command": dir + "/../sh"}, "command", true},
		{"missing", execKind(t, dir, stagekind.ExecOptions{}), map[string]any{}, "command", false},
		{"an arg not a string", execKind(t, dir, stagekind.ExecOptions{}), map[string]any{"command": cmd, "args": []any{"a", 2}}, "args[1]", false},
		{"an executor variable", execKind(t, dir, stagekind.ExecOptions{}), map[string]any{"command": cmd, "env": map[string]any{"EXECUTOR_FENCE": "1"}}, "env.EXECUTOR_FENCE", false},
		{"an exit code out of range", execKind(t, dir, stagekind.ExecOptions{}), map[string]any{"command": cmd, "permanentExitCodes": []any{0}}, "permanentExitCodes[0]", false},
		{"a kill grace too long", execKind(t, dir, stagekind.ExecOptions{}), map[string]any{"command": cmd, "killGrace": "1h"}, "killGrace", false},
		{"a typo", execKind(t, dir, stagekind.ExecOptions{}), map[string]any{"command": cmd, "arg": []any{}}, "arg", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.kind.ValidateParams(tt.params)
			require.ErrorIs(t, err, stagekind.ErrInvalidParams)
			var fe *stage.FieldError
			require.True(t, errors.As(err, &fe))
			assert.Equal(t, tt.field, fe.Field)
			if tt.denied {
				require.ErrorIs(t, err, stagekind.ErrExecDenied)
			}
			_, runErr := tt.kind.Run(context.Background(), execRequest(tt.params))
			assert.Equal(t, stage.ClassPermanent, stage.AsError(runErr).Class, "run with such params fails at once")
		})
	}
}

func TestParseExecAllowRefusesRelativeEntries(t *testing.T) {
	t.Parallel()
	_, err := stagekind.ParseExecAllow([]string{"bin/"})
	require.Error(t, err)
	list, err := stagekind.ParseExecAllow(nil)
	require.NoError(t, err)
	assert.True(t, list.Empty())
}
