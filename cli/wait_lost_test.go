package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/cli"
	"github.com/executor-dev/executor/wire"
)

// frontDoor forwards TCP connections to an executor until it is killed: then the executor is
// gone for its clients as if its process had died (open connections reset, new ones refused).
type frontDoor struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

// newFrontDoor starts a frontDoor to the executor at url and returns it with its own URL.
func newFrontDoor(t *testing.T, url string) (*frontDoor, string) {
	t.Helper()
	target := strings.TrimPrefix(url, "http://")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	d := &frontDoor{ln: ln}
	t.Cleanup(d.kill)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			d.mu.Lock()
			d.conns = append(d.conns, c, up)
			d.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
			go func() { _, _ = io.Copy(c, up); _ = c.Close() }()
		}
	}()
	return d, "http://" + ln.Addr().String()
}

// kill closes the listener and every connection.
func (d *frontDoor) kill() {
	_ = d.ln.Close()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // a reset, as when a process dies
		}
		_ = c.Close()
	}
}

// submit --wait first says that the plan was submitted and that it waits; when the executor
// dies mid-wait it says that it lost the executor, that the plan was submitted, and how to
// follow it elsewhere (exit 1).
func TestSubmitWaitLosesTheExecutor(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	door, url := newFrontDoor(t, srv.URL())
	file := writePlan(t, "lost", []string{"lost-1"}, sleep("bake", "1m"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int)
	go func() {
		done <- cli.Main(ctx, []string{"--server", url, "submit", "-f", file, "--wait"}, &stdout, &stderr)
	}()
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "waiting for it to end\n") },
		10*time.Second, 10*time.Millisecond, "no notice before the wait: %q", stderr.String())
	time.Sleep(200 * time.Millisecond) // the command long-polls the plan
	door.kill()
	var code int
	select {
	case code = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("submit --wait did not end when its executor died")
	}
	l := decode[wire.PlanList](t, runCLI(t, srv.URL(), "plan", "list", "-o", "json").stdout)
	require.Len(t, l.Plans, 1)
	id := l.Plans[0].PlanID
	assert.Equal(t, cli.ExitFailure, code, "stderr: %s", stderr.String())
	assert.Empty(t, stdout.String())
	lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
	require.Len(t, lines, 2, "stderr: %q", stderr.String())
	assert.Regexp(t, `^plan `+id+` submitted \((PENDING|RUNNING)\); waiting for it to end$`, lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "error: lost the executor while waiting: "), "stderr: %q", lines[1])
	assert.True(t, strings.HasSuffix(lines[1],
		fmt.Sprintf("; plan %s was submitted: follow it on any executor with executor plan show %s --watch", id, id)), "stderr: %q", lines[1])
	requireCode(t, cli.ExitOK, runCLI(t, srv.URL(), "plan", "cancel", id))
}

// The notice of a scheduled plan says when it starts.
func TestSubmitWaitSaysWhenAScheduledPlanStarts(t *testing.T) {
	t.Parallel()
	url := startServer(t).URL()
	at := time.Now().Add(2 * time.Second).UTC().Truncate(time.Second)
	file := writeRequest(t, "later", wire.PlanRequest{StartAt: &at, Stages: []wire.StageRequest{noop("a")}, Tenants: tenantsOf("later-1")})
	r := runCLI(t, url, "submit", "-f", file, "--wait", "-o", "json")
	requireCode(t, cli.ExitOK, r)
	p := decode[wire.Plan](t, r.stdout)
	assert.Equal(t, "COMPLETED", p.Status)
	assert.Equal(t, fmt.Sprintf("plan %s submitted (SCHEDULED, starts at %s); waiting for it to end\n", p.PlanID, at.Format(time.RFC3339)), r.stderr)
}

// syncBuffer is a bytes.Buffer that a command writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
