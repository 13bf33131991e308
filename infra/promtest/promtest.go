// Package promtest runs a real Prometheus server for tests (the prometheus binary of Debian's
// package), on a free loopback port, scraping every second the targets a test gives (an
// Exporter whose gauges the test sets). The test can stop, kill and restart it. A missing
// binary fails the test with an install hint; it never skips.
package promtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// InstallHint says how to get the binary.
const InstallHint = "prometheus is not installed: run `apt-get install -y --no-install-recommends prometheus` (make test does this when run as root)"

// startTimeout bounds a start until the server is ready and has scraped every target.
const startTimeout = 60 * time.Second

// Server is a prometheus process owned by a test.
type Server struct {
	t       testing.TB
	bin     string
	dir     string
	port    int
	targets []string
	mu      sync.Mutex
	cmd     *exec.Cmd
	log     *bytes.Buffer
	starts  int // each start has a data directory of its own: a restarted server has lost what it scraped
}

// Start starts Prometheus scraping targets (host:port, /metrics) every second, and waits until
// it is ready and has scraped each of them once. It is killed when the test ends; its log is
// printed if the test failed. PROMETHEUS_BIN overrides the binary's path.
func Start(t testing.TB, targets ...string) *Server {
	t.Helper()
	bin := os.Getenv("PROMETHEUS_BIN")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("prometheus"); err != nil {
			t.Fatalf("promtest: %s", InstallHint)
		}
	}
	s := &Server{t: t, bin: bin, dir: t.TempDir(), targets: targets}
	quoted := make([]string, len(targets))
	for i, tg := range targets {
		quoted[i] = strconv.Quote(tg)
	}
	conf := "global: {scrape_interval: 1s, evaluation_interval: 1s, scrape_timeout: 1s}\n" +
		"scrape_configs:\n  - job_name: exporter\n    static_configs:\n      - targets: [" + strings.Join(quoted, ", ") + "]\n"
	if err := os.WriteFile(filepath.Join(s.dir, "prometheus.yml"), []byte(conf), 0o644); err != nil {
		t.Fatalf("promtest: config: %v", err)
	}
	t.Cleanup(func() {
		s.Kill()
		if t.Failed() {
			t.Logf("prometheus on %s log:\n%s", s.Addr(), s.logText())
		}
	})
	for try := 0; ; try++ {
		s.port = freePort(t)
		err := s.start()
		if err == nil {
			return s
		}
		if try == 2 || !strings.Contains(s.logText(), "address already in use") {
			t.Fatalf("promtest: %v\nlog:\n%s", err, s.logText())
		}
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("promtest: free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// URL is the server's base URL, what the prometheus kind's address names.
func (s *Server) URL() string { return "http://" + s.Addr() }

// start starts the process and waits until it is ready and every target is up; on failure the
// process is gone.
func (s *Server) start() error {
	s.mu.Lock()
	if s.cmd != nil {
		s.mu.Unlock()
		return fmt.Errorf("prometheus on %d is already running", s.port)
	}
	s.log = &bytes.Buffer{}
	s.starts++
	cmd := exec.Command(s.bin, "--config.file="+filepath.Join(s.dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(s.dir, "data"+strconv.Itoa(s.starts)), "--web.listen-address="+s.Addr(),
		"--storage.tsdb.retention.time=1h", "--log.level=warn")
	cmd.Stdout, cmd.Stderr = &lockedWriter{mu: &s.mu, w: s.log}, &lockedWriter{mu: &s.mu, w: s.log}
	if err := cmd.Start(); err != nil {
		s.mu.Unlock()
		return fmt.Errorf("start prometheus: %w", err)
	}
	s.cmd = cmd
	s.mu.Unlock()
	if err := s.waitReady(); err != nil {
		s.Kill()
		return err
	}
	return nil
}

// waitReady waits until /-/ready answers 200 and this process scraped every target up.
func (s *Server) waitReady() error {
	since := time.Now()
	deadline := since.Add(startTimeout)
	for {
		if err := s.ready(since); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			return fmt.Errorf("prometheus on %s not ready after %s: %v", s.Addr(), startTimeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *Server) ready(since time.Time) error {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(s.URL() + "/-/ready")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/-/ready: %s", resp.Status)
	}
	if len(s.targets) == 0 {
		return nil
	}
	// Scraped by this process, not read back from the data a killed one left behind.
	vals, err := s.Query(fmt.Sprintf(`count(timestamp(up{job="exporter"} == 1) > %d)`, since.Unix()))
	if err != nil {
		return err
	}
	if len(vals) != 1 || vals[0] != float64(len(s.targets)) {
		return fmt.Errorf("targets up since the start: %v of %d", vals, len(s.targets))
	}
	return nil
}

// Query runs an instant query and returns its samples' values (a scalar is one).
func (s *Server) Query(q string) ([]float64, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.PostForm(s.URL()+"/api/v1/query", url.Values{"query": {q}})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var a struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		return nil, fmt.Errorf("query %s: %s: %w", q, resp.Status, err)
	}
	if a.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", q, a.Error)
	}
	return values(a.Data.ResultType, a.Data.Result)
}

// values reads a scalar's or a vector's values.
func values(kind string, raw json.RawMessage) ([]float64, error) {
	var pairs [][2]any
	switch kind {
	case "scalar":
		var p [2]any
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, err
		}
		pairs = append(pairs, p)
	case "vector":
		var samples []struct {
			Value [2]any `json:"value"`
		}
		if err := json.Unmarshal(raw, &samples); err != nil {
			return nil, err
		}
		for _, x := range samples {
			pairs = append(pairs, x.Value)
		}
	default:
		return nil, fmt.Errorf("a %s result", kind)
	}
	out := make([]float64, len(pairs))
	for i, p := range pairs {
		str, _ := p[1].(string)
		f, err := strconv.ParseFloat(str, 64)
		if err != nil {
			return nil, err
		}
		out[i] = f
	}
	return out, nil
}

// WaitValue waits until query's first value satisfies want: until Prometheus has scraped
// what the test set. It fails the test after timeout with the last answer.
func (s *Server) WaitValue(t testing.TB, query string, want func(float64) bool, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		vals, err := s.Query(query)
		if err == nil && len(vals) > 0 && want(vals[0]) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("promtest: %s did not give the value wanted within %s: %v %v", query, timeout, vals, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Stop shuts the server down (SIGTERM) and waits for it to exit; a stopped server is left alone.
func (s *Server) Stop() { s.signal(syscall.SIGTERM) }

// Kill kills the server (SIGKILL) and waits for it to exit.
func (s *Server) Kill() { s.signal(syscall.SIGKILL) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	_ = cmd.Wait()
	s.mu.Lock()
	s.cmd = nil
	s.mu.Unlock()
}

// Restart starts a stopped server again, on the same port, without what it scraped before
// (restarted on the data a killed one left, Prometheus 2.42 kept answering the old samples of
// a series the exporter had dropped, in our runs: an empty start is what a test can trust).
func (s *Server) Restart() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatalf("promtest: %v\nlog:\n%s", err, s.logText())
	}
}

func (s *Server) logText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log == nil {
		return ""
	}
	return s.log.String()
}

// lockedWriter writes to w under mu (the process writes while the test reads).
type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
