//go:build chaos

package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
)

// Executor is one named member of the cluster: its fault proxy to Redis (every executor
// reaches Redis through its own, so that one executor alone can be cut off) and its current
// process. A kill -9 ends a process; the executor starts again under the same name.
type Executor struct {
	Name  string
	Proxy *redistest.FaultProxy

	mu           sync.Mutex
	proc         *Process
	addr         string
	incarnations int
	down         bool // killed and not started again yet
	frozen       bool // SIGSTOPped
}

// URL is the HTTP base URL of the executor's current (or last) process.
func (e *Executor) URL() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return "http://" + e.addr
}

// Up reports whether a process of the executor runs (frozen or not).
func (e *Executor) Up() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return !e.down
}

// Frozen reports whether the executor's process is SIGSTOPped.
func (e *Executor) Frozen() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.frozen
}

// Incarnations is how many processes the executor ran.
func (e *Executor) Incarnations() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.incarnations
}

// LogPath is the file the executor's processes log to.
func (e *Executor) logPath(dir string) string { return filepath.Join(dir, e.Name+".log") }

// Cluster is the run's topology: one redis-server, and Config.Executors executors each
// behind its own fault proxy, all sharing the Redis.
type Cluster struct {
	cfg       Config
	bin       string
	dir       string
	hist      *History
	Redis     *redistest.Server
	RDB       *redis.Client // straight to Redis: the OOM fault and the checks
	Executors []*Executor
}

// Faults the proxies inject while a connection-reset fault is on (Inject): each request
// chunk is dropped before Redis sees it, or its reply is lost, or it is held past the
// executor's 1 s timeout and delivered late.
var resetFaults = redistest.Faults{Drop: 0.10, LoseReply: 0.10, Delay: 0.05, Late: true}

// StartCluster starts the Redis (noeviction, so that a low maxmemory refuses writes with
// OOM), the proxies and the executors, each executor logging to dir/<name>.log. Everything
// is killed when the test ends.
func StartCluster(t *testing.T, cfg Config, bin, dir string, hist *History, rng *Rand) *Cluster {
	t.Helper()
	rs := redistest.Start(t, redistest.Args("--maxmemory-policy", "noeviction"))
	c := &Cluster{cfg: cfg, bin: bin, dir: dir, hist: hist, Redis: rs}
	c.RDB = redis.NewClient(&redis.Options{Addr: rs.Addr(), DialTimeout: 2 * time.Second,
		ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second, MaxRetries: 2})
	t.Cleanup(func() { _ = c.RDB.Close() })
	for i := range cfg.Executors {
		f := resetFaults
		f.Seed = rng.Int63()
		c.Executors = append(c.Executors, &Executor{Name: fmt.Sprintf("exec-%c", 'a'+i), Proxy: rs.NewFaultProxy(f)})
	}
	// Registered after the Redis and the proxies: runs before they are stopped.
	t.Cleanup(func() {
		for _, e := range c.Executors {
			if err := c.kill(e); err != nil {
				t.Error(err)
			}
		}
	})
	for _, e := range c.Executors {
		require.NoError(t, c.Start(e))
	}
	return c
}

// Start starts a process of e (again, after a kill: same name, same address when it is
// still free) and waits until it serves. e counts as down until then.
func (c *Cluster) Start(e *Executor) error {
	var last error
	for try := range 3 {
		e.mu.Lock()
		if e.proc != nil && !e.proc.Exited() {
			e.mu.Unlock()
			return fmt.Errorf("chaos: %s still runs", e.Name)
		}
		if e.addr == "" || try > 0 {
			addr, err := freeAddr()
			if err != nil {
				e.mu.Unlock()
				return err
			}
			e.addr = addr
		}
		e.incarnations++
		e.down = true
		incarnation, addr := e.incarnations, e.addr
		e.mu.Unlock()

		args := []string{"serve", "--redis", e.Proxy.URL(), "--name", e.Name, "--addr", addr,
			"--lease-ttl", c.cfg.LeaseTTL.String(), "--workers", fmt.Sprint(c.cfg.Workers)}
		p, err := startProcess(c.bin, args, e.Name, addr, incarnation, e.logPath(c.dir), c.exited)
		if err != nil {
			return err
		}
		e.mu.Lock()
		e.proc, e.frozen = p, false
		e.mu.Unlock()
		if last = p.waitHealthy(); last == nil {
			e.mu.Lock()
			e.down = false
			e.mu.Unlock()
			c.hist.Notef("%s: incarnation %d serving on %s (pid %d)", e.Name, incarnation, addr, p.Pid())
			return nil
		}
		_ = p.Kill()
		if !strings.Contains(tail(p.LogPath, 4096), "address already in use") {
			break
		}
	}
	return fmt.Errorf("%w; log tail:\n%s", last, tail(e.logPath(c.dir), 4096))
}

// exited records a process that exited without the harness killing it: a crash.
func (c *Cluster) exited(p *Process) {
	if p.Expected() {
		return
	}
	c.hist.AddExit(ExitRecord{Name: p.Name, Incarnation: p.Incarnation, At: time.Now(),
		Err: fmt.Sprint(p.err), LogPath: p.LogPath})
	c.hist.Notef("%s: incarnation %d EXITED on its own: %v", p.Name, p.Incarnation, p.err)
}

// Kill kills e's process with SIGKILL (kill -9) and waits until it is gone.
func (c *Cluster) Kill(e *Executor) error { return c.kill(e) }

func (c *Cluster) kill(e *Executor) error {
	e.mu.Lock()
	p := e.proc
	e.down, e.frozen = true, false
	e.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.Kill()
}

// Freeze stops e's process (SIGSTOP): its sockets stay open, nothing answers.
func (c *Cluster) Freeze(e *Executor) error { return c.signal(e, syscall.SIGSTOP, true) }

// Thaw resumes a frozen e (SIGCONT).
func (c *Cluster) Thaw(e *Executor) error { return c.signal(e, syscall.SIGCONT, false) }

func (c *Cluster) signal(e *Executor, sig syscall.Signal, frozen bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.down || e.proc == nil {
		return fmt.Errorf("chaos: %s is down", e.Name)
	}
	if err := e.proc.Signal(sig); err != nil {
		return fmt.Errorf("chaos: %v to %s: %w", sig, e.Name, err)
	}
	e.frozen = frozen
	return nil
}

// Pick returns a random executor that is up (frozen or not: clients cannot tell).
func (c *Cluster) Pick(rng *Rand) *Executor {
	var up []*Executor
	for _, e := range c.Executors {
		if e.Up() {
			up = append(up, e)
		}
	}
	if len(up) == 0 {
		return c.Executors[rng.Intn(len(c.Executors))]
	}
	return up[rng.Intn(len(up))]
}

// WaitReady waits until every executor that is up answers GET /readyz with 200 (it reaches
// Redis and has written back what it held), for at most timeout.
func (c *Cluster) WaitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: 3 * time.Second}
	for {
		var notReady []string
		for _, e := range c.Executors {
			if !e.Up() {
				notReady = append(notReady, e.Name+": down")
				continue
			}
			if s := readyz(ctx, client, e.URL()); s != "" {
				notReady = append(notReady, e.Name+": "+s)
			}
		}
		if len(notReady) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("chaos: executors not ready after %s: %s", timeout, strings.Join(notReady, "; "))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// readyz returns "" when GET /readyz answers 200, else what it answered.
func readyz(ctx context.Context, client *http.Client, base string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
	if err != nil {
		return err.Error()
	}
	resp, err := client.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode == http.StatusOK {
		return ""
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(b)))
}

// tail returns the last n bytes of the file at path.
func tail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err.Error()
	}
	off := max(st.Size()-n, 0)
	b := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return err.Error()
	}
	return string(b)
}
