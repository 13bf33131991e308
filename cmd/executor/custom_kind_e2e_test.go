package main_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// examples/custom-kind is `executor` with one more stage kind, from a few lines of Go calling
// cli.Main with cli.WithKinds: built and run as a real process, it serves the example plan of
// its kind to its end, and keeps serve's guard (no non-loopback address without tokens).
func TestTheCustomKindExampleIsTheWholeExecutor(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "custom-kind")
	build := exec.Command("go", "build", "-o", bin, "../../examples/custom-kind")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build ./examples/custom-kind: %s", out)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	guard := exec.CommandContext(ctx, bin, "serve", "--addr", "0.0.0.0:"+strconv.Itoa(freePort(t)))
	guard.Env = cleanEnv()
	out, err = guard.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "serve on a non-loopback address without tokens must refuse: %s", out)
	assert.Equal(t, 2, exit.ExitCode())
	assert.Contains(t, string(out), "without tokens")

	p := &executorProc{name: "custom-kind", addr: "127.0.0.1:" + strconv.Itoa(freePort(t)), output: &servertest.Buffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, "serve", "--addr", p.addr)
	p.cmd.Env = cleanEnv()
	p.cmd.Stdout, p.cmd.Stderr = p.output, p.output
	require.NoError(t, p.cmd.Start())
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		p.kill(t)
		if t.Failed() {
			t.Logf("custom-kind output:\n%s", p.output.String())
		}
	})
	require.True(t, p.waitHealthy(t), "the custom executor serves")

	r := runBinary(t, p.URL(), "submit", "-f", filepath.Join("..", "..", "examples", "custom-kind", "plan.yaml"), "--wait", "-o", "json")
	requireExit(t, 0, r)
	pl := decode[wire.Plan](t, r.stdout)
	assert.Equal(t, "COMPLETED", pl.Status)
	cp := decode[wire.Checkpoint](t, runBinary(t, p.URL(), "checkpoint", "--tenant", "tenant-a", "-o", "json").stdout)
	var got struct{ Purged string }
	require.NoError(t, json.Unmarshal(cp.ContextData["purge"], &got))
	assert.Equal(t, "tenant-a:assets/2026.11", got.Purged)
}
