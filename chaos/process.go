//go:build chaos

package chaos

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Limits of a process's life.
const (
	healthTimeout = 45 * time.Second // start until GET /healthz answers (a name still alive in Redis waits up to a lease TTL)
	killTimeout   = 15 * time.Second // SIGKILL until the process is reaped
)

// Process is one `executor serve` process (one incarnation of an Executor). Its stdout and
// stderr (the JSON log lines) go to a file.
type Process struct {
	Name        string
	Addr        string
	Incarnation int
	LogPath     string

	cmd      *exec.Cmd
	log      *os.File
	exited   chan struct{} // closed once Wait returned
	err      error         // Wait's error, read only after exited closed
	expected atomic.Bool   // the harness killed it: its exit is no finding
	killOnce sync.Once
}

// startProcess starts bin with args, its output appended to logPath, and a watcher that
// calls onExit(p) once it has exited. The process is SIGKILLed should the test process die
// first (Pdeathsig), so that an aborted run leaves no executor behind.
func startProcess(bin string, args []string, name, addr string, incarnation int, logPath string, onExit func(*Process)) (*Process, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(f, "### chaos: %s incarnation %d on %s starts at %s: %s %s\n",
		name, incarnation, addr, time.Now().Format(time.RFC3339Nano), bin, strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Env = cleanEnv()
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("chaos: start %s: %w", bin, err)
	}
	p := &Process{Name: name, Addr: addr, Incarnation: incarnation, LogPath: logPath,
		cmd: cmd, log: f, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		fmt.Fprintf(f, "### chaos: %s incarnation %d exited at %s: %v (killed by the harness: %t)\n",
			name, incarnation, time.Now().Format(time.RFC3339Nano), p.err, p.expected.Load())
		f.Close()
		close(p.exited)
		if onExit != nil {
			onExit(p)
		}
	}()
	return p, nil
}

// cleanEnv is the test's environment without any EXECUTOR_* setting that could redirect the
// executor (an empty value counts as unset).
func cleanEnv() []string {
	return append(os.Environ(),
		"EXECUTOR_SERVER=", "EXECUTOR_TOKEN=", "EXECUTOR_TOKENS=", "EXECUTOR_TOKENS_FILE=", "EXECUTOR_ADDR=",
		"EXECUTOR_WORKERS=", "EXECUTOR_REDIS_URL=", "EXECUTOR_PREFIX=", "EXECUTOR_LEASE_TTL=", "EXECUTOR_NAME=",
		"EXECUTOR_DEGRADED_NEW_PLANS=", "EXECUTOR_HTTP_ALLOW=")
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// URL is the process's HTTP base URL.
func (p *Process) URL() string { return "http://" + p.Addr }

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// ExitErr is how the process ended (nil while it runs).
func (p *Process) ExitErr() error {
	if !p.Exited() {
		return nil
	}
	return p.err
}

// Expected reports whether the harness killed the process.
func (p *Process) Expected() bool { return p.expected.Load() }

// Kill sends SIGKILL (it also kills a stopped process) and waits until the process is gone.
func (p *Process) Kill() error {
	var err error
	p.killOnce.Do(func() {
		p.expected.Store(true)
		if !p.Exited() {
			_ = p.cmd.Process.Kill()
		}
		select {
		case <-p.exited:
		case <-time.After(killTimeout):
			err = fmt.Errorf("chaos: %s (pid %d) still runs %s after SIGKILL", p.Name, p.Pid(), killTimeout)
		}
	})
	return err
}

// Signal sends sig (SIGSTOP, SIGCONT) to the process.
func (p *Process) Signal(sig syscall.Signal) error { return p.cmd.Process.Signal(sig) }

// waitHealthy polls GET /healthz until it answers 200 (nil), the process exits or
// healthTimeout passes.
func (p *Process) waitHealthy() error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(healthTimeout)
	for time.Now().Before(deadline) {
		if p.Exited() {
			return fmt.Errorf("chaos: %s exited before serving: %v", p.Name, p.err)
		}
		resp, err := client.Get(p.URL() + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("chaos: %s on %s: GET /healthz did not answer 200 within %s", p.Name, p.Addr, healthTimeout)
}

// freeAddr returns a free loopback address.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return "127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), nil
}
