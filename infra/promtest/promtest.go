// Package promtest runs a real Prometheus server for tests (the prometheus binary of Debian's
// package, or PROMETHEUS_BIN), on a free loopback port, scraping every second the targets a
// test gives (an Exporter whose gauges the test sets). The test can stop, kill and restart it
// (on its port and its data). A missing binary fails the test with an install hint; it never
// skips.
package promtest

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// InstallHint says how to get the binary.
const InstallHint = "prometheus is not installed: run `apt-get install -y --no-install-recommends prometheus` (make test does this when run as root)"

// BinEnv names the environment variable that overrides the prometheus binary's path.
const BinEnv = "PROMETHEUS_BIN"

const (
	// startTimeout bounds a start until the server is ready and has scraped every target.
	startTimeout = 60 * time.Second
	// stopTimeout bounds a graceful stop; a server still running then is killed.
	stopTimeout = 30 * time.Second
)

// Server is a prometheus process owned by a test.
type Server struct {
	t       testing.TB
	bin     string
	dir     string // the configuration, the data (data/) and the log (prometheus.log)
	port    int
	targets []string

	mu   sync.Mutex // held throughout a start and a stop: one at a time
	proc *process   // the running process; nil when stopped
}

// process is one run of the binary.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process exited and was waited for
	err  error         // its exit status, set before done is closed
}

// Start starts Prometheus scraping targets (host:port, /metrics; job "exporter") every second,
// and waits until it is ready and has scraped each of them up. It is killed when the test
// ends, and its log's tail printed if the test failed.
func Start(t testing.TB, targets ...string) *Server {
	t.Helper()
	bin := binary(t)
	s := &Server{t: t, bin: bin, dir: t.TempDir(), targets: distinct(targets)}
	if err := os.WriteFile(s.path("prometheus.yml"), []byte(config(s.targets)), 0o644); err != nil {
		t.Fatalf("promtest: config: %v", err)
	}
	t.Cleanup(func() {
		s.Kill()
		if t.Failed() {
			t.Logf("%s, the tail of its log:\n%s", s, s.logTail())
		}
	})
	for try := 1; ; try++ {
		s.port = freePort(t)
		err := s.start()
		if err == nil {
			return s
		}
		if try == 3 || !errors.Is(err, errPortTaken) {
			t.Fatalf("promtest: %v\nthe tail of its log:\n%s", err, s.logTail())
		}
		// another process took the free port between its pick and the start: pick again
	}
}

// binary returns the path of the prometheus binary: PROMETHEUS_BIN's, else the one on PATH.
func binary(t testing.TB) string {
	t.Helper()
	name := "prometheus"
	if env := os.Getenv(BinEnv); env != "" {
		name = env
	}
	bin, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("promtest: %s (%v)", InstallHint, err)
	}
	return bin
}

// distinct returns targets without repeats (Prometheus scrapes a repeated target once).
func distinct(targets []string) []string {
	var out []string
	for _, tg := range targets {
		if !slices.Contains(out, tg) {
			out = append(out, tg)
		}
	}
	return out
}

// config returns the configuration file: one job, "exporter", scraping targets every second.
func config(targets []string) string {
	quoted := make([]string, len(targets))
	for i, tg := range targets {
		quoted[i] = strconv.Quote(tg)
	}
	return "global: {scrape_interval: 1s, evaluation_interval: 1s, scrape_timeout: 1s}\n" +
		"scrape_configs:\n  - job_name: exporter\n    static_configs:\n" +
		"      - targets: [" + strings.Join(quoted, ", ") + "]\n"
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("promtest: free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Port returns the server's port.
func (s *Server) Port() int { return s.port }

// Addr returns the server's host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// URL returns the server's base URL, http://127.0.0.1:port (what a prometheus stage's address
// names).
func (s *Server) URL() string { return "http://" + s.Addr() }

// String describes the server for test logs.
func (s *Server) String() string { return "prometheus on " + s.Addr() }

// Restart starts a stopped or killed server again, on the same port and its data, and waits
// until it is ready and has scraped every target up. Restarting a running server fails the
// test.
//
// The data is what a restarted Prometheus has: what it scraped before is still there, and a
// series its target dropped while it was down is answered for the 5 minutes of the query
// lookback (a new process has no previous scrape to mark it stale from).
func (s *Server) Restart() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatalf("promtest: %v\nthe tail of its log:\n%s", err, s.logTail())
	}
}

// Stop shuts the server down gracefully (SIGTERM) and waits for it to exit (it is killed
// after 30 s). Stopping a stopped server is a no-op.
func (s *Server) Stop() { s.signal(syscall.SIGTERM) }

// Kill kills the server (SIGKILL) and waits for it to exit. Killing a stopped server is a
// no-op.
func (s *Server) Kill() { s.signal(syscall.SIGKILL) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return
	}
	_ = s.proc.cmd.Process.Signal(sig)
	select {
	case <-s.proc.done:
	case <-time.After(stopTimeout):
		_ = s.proc.cmd.Process.Kill()
		<-s.proc.done
	}
	s.proc = nil
}

func (s *Server) path(name string) string { return filepath.Join(s.dir, name) }
