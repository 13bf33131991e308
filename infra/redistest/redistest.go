// Package redistest runs a private redis-server for tests: on a free loopback port (never the
// shared 6379), with no persistence, owned by the test, which can stop, kill, freeze and
// restart it. A missing redis-server binary fails the test with an install hint; it never
// skips.
package redistest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// InstallHint says how to get the binary.
const InstallHint = "redis-server is not installed: run `apt-get install -y redis-server` (make test does this when run as root)"

// Server is a redis-server process owned by a test.
type Server struct {
	t    testing.TB
	bin  string
	port int
	dir  string
	args []string // extra command-line arguments (Args)
	conf string   // a configuration file's contents (Config): written once, passed first

	mu     sync.Mutex
	cmd    *exec.Cmd
	adminc *redis.Client // the harness's own client (admin), made once
}

// Option configures a Server at Start.
type Option func(*Server)

// Args adds redis-server command-line arguments, in pairs of a directive and its value, e.g.
// Args("--maxmemory", "2mb", "--maxmemory-policy", "noeviction"), after the defaults (which
// they override), at every start of the server.
func Args(args ...string) Option {
	return func(s *Server) { s.args = append(s.args, args...) }
}

// Config makes the server read a configuration file with these contents, written into its
// directory once at Start and kept across restarts (a sentinel or a cluster node rewrites its
// own), before the command-line arguments.
func Config(contents string) Option {
	return func(s *Server) { s.conf = contents }
}

// Start starts a redis-server on a free port, configured by opts, and stops it when the test
// ends.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal(InstallHint)
	}
	s := &Server{t: t, bin: bin, port: freePort(t), dir: t.TempDir()}
	for _, o := range opts {
		o(s)
	}
	if s.conf != "" {
		if err := os.WriteFile(filepath.Join(s.dir, "redis.conf"), []byte(s.conf), 0o600); err != nil {
			t.Fatalf("redistest: config file: %v", err)
		}
	}
	t.Cleanup(s.Kill)
	for try := 1; ; try++ {
		err := s.start()
		if err == nil {
			return s
		}
		if try == 3 || !errors.Is(err, errPortTaken) {
			t.Fatalf("redistest: %v", err)
		}
		s.port = freePort(t) // another process took the free port between its pick and the start
	}
}

// errPortTaken is start's error when redis-server could not listen: its port was taken.
var errPortTaken = errors.New("port taken")

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("redistest: free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Port returns the server's port.
func (s *Server) Port() int { return s.port }

// Addr returns host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// URL returns a redis:// URL for the server.
func (s *Server) URL() string { return "redis://" + s.Addr() + "/0" }

// Client returns a new client for the server, closed when the test ends.
func (s *Server) Client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	s.t.Cleanup(func() { _ = c.Close() })
	return c
}

// Restart starts the server again (empty: nothing is persisted) on the same port, and waits
// until it answers PING. Starting a running server is an error.
func (s *Server) Restart() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatalf("redistest: %v", err)
	}
}

// start starts the server and waits until it answers PING; on failure the process is gone.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return fmt.Errorf("server on %d is already running", s.port)
	}
	var args []string
	if s.conf != "" {
		args = append(args, filepath.Join(s.dir, "redis.conf"))
	}
	args = append(append(args,
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", s.dir, "--protected-mode", "no", "--loglevel", "warning",
		"--logfile", filepath.Join(s.dir, "redis.log"),
	), s.args...)
	logFile := filepath.Join(s.dir, "redis.log")
	logged := 0 // what the log held before this start (a restart appends to it)
	if b, err := os.ReadFile(logFile); err == nil {
		logged = len(b)
	}
	cmd := exec.Command(s.bin, args...)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	s.cmd = cmd
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		log, _ := os.ReadFile(logFile)
		taken := len(log) > logged && bytes.Contains(log[logged:], []byte("Address already in use"))
		if taken || time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			s.cmd = nil
			if taken {
				return fmt.Errorf("redis-server on %d: %w", s.port, errPortTaken)
			}
			return fmt.Errorf("redis-server on %d did not answer: %w", s.port, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Stop shuts the server down gracefully (SIGTERM) and waits for it to exit.
func (s *Server) Stop() { s.signal(syscall.SIGTERM) }

// Kill kills the server (SIGKILL) and waits for it to exit. Killing a stopped server is a
// no-op.
func (s *Server) Kill() { s.signal(syscall.SIGKILL) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(sig)
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Freeze stops the process (SIGSTOP) without closing its sockets, so clients time out; Thaw
// resumes it.
func (s *Server) Freeze() { s.send(syscall.SIGSTOP) }

// Thaw resumes a frozen server (SIGCONT).
func (s *Server) Thaw() { s.send(syscall.SIGCONT) }

func (s *Server) send(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		s.t.Fatalf("redistest: server on %d is not running", s.port)
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatalf("redistest: %v: %v", sig, err)
	}
}

// String describes the server for test logs.
func (s *Server) String() string { return fmt.Sprintf("redis-server on %s", s.Addr()) }

// running reports whether the server's process runs (it may be frozen).
func (s *Server) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}

// admin returns the harness's own client of the server (no retries, short timeouts), made
// once and closed when the test ends.
func (s *Server) admin() *redis.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.adminc == nil {
		s.adminc = redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1, Protocol: 2,
			DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second})
		c := s.adminc
		s.t.Cleanup(func() { _ = c.Close() })
	}
	return s.adminc
}
