package main_test

// Helpers of the attacks of issue 33 (attacks_e2e_test.go): an `executor serve` process under
// an address-space limit, what /proc says of it, and a watch that reads its resident set and
// asks GET /healthz while an attack runs.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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

// Bounds of an attacked executor.
const (
	// attackAddressSpace is the serve process's RLIMIT_AS (prlimit --as), so that a regression
	// fails by a crash rather than by eating the host's memory. A Go process reserves address
	// space it never touches: about 0.6 GB at start for the heap's page summaries (under 0.8 GB
	// the runtime cannot even start: "failed to reserve page summary memory"), and an idle
	// executor's VmSize is about 1.7 GB, 2.0 GB at the peak of these attacks (VmPeak). At 4 GiB
	// a healthy executor never reaches it, while a heap that grows by about 2 GB more has its
	// mmap refused and the Go runtime dies ("out of memory"): GET /healthz stops answering and
	// the test fails, instead of the host swapping or its OOM killer picking a victim.
	// GOMEMLIMIT is only a target of the garbage collector, not a limit: it is cleared.
	attackAddressSpace = 4 << 30
	// attackPeakRSS bounds the serve process's resident set through an attack: VmRSS while it
	// runs, VmHWM (the peak since the process started) at its end.
	attackPeakRSS = 300 << 20
	// probeEvery is how often an attackWatch reads VmRSS and asks GET /healthz.
	probeEvery = 50 * time.Millisecond
	// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat: 100 on Linux
	// whatever the kernel's own HZ.
	clockTicks = 100
)

// startUnderLimit starts `prlimit --as=attackAddressSpace executor serve --addr 127.0.0.1:<free
// port> [extra...]` on the embedded in-memory store and waits until GET /healthz answers.
// prlimit sets the limit on itself and execs the executor: the process keeps its PID, which
// is checked (/proc/<pid>/exe is the executor) with the limit it runs under. The process is
// killed when the test ends; its output is printed if the test failed.
func startUnderLimit(t *testing.T, name string, extra ...string) *executorProc {
	t.Helper()
	prlimit, err := exec.LookPath("prlimit")
	require.NoError(t, err, "prlimit runs the executor under an address-space limit: install util-linux (apt-get install util-linux)")
	p := startRetrying(t, name, func() *executorProc { return spawnUnderLimit(t, prlimit, name, extra...) })
	requireLimited(t, p)
	t.Logf("%s: address space limited to %d bytes", name, attackAddressSpace)
	return p
}

func spawnUnderLimit(t *testing.T, prlimit, name string, extra ...string) *executorProc {
	t.Helper()
	p := &executorProc{
		name:   name,
		addr:   "127.0.0.1:" + strconv.Itoa(freePort(t)),
		output: &servertest.Buffer{},
		exited: make(chan struct{}),
	}
	p.cmd = exec.Command(prlimit, append([]string{"--as=" + strconv.Itoa(attackAddressSpace), "--",
		binary, "serve", "--addr", p.addr}, extra...)...)
	p.cmd.Env = append(cleanEnv(), "GOMEMLIMIT=", "GOGC=") // the runtime's defaults: no soft limit
	p.cmd.Stdout, p.cmd.Stderr = p.output, p.output
	p.cmd.WaitDelay = 5 * time.Second
	require.NoError(t, p.cmd.Start(), "%s: start %s %s", name, prlimit, binary)
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

// requireLimited checks that p's PID is the executor itself (prlimit exec'd it) and that it
// runs under attackAddressSpace.
func requireLimited(t *testing.T, p *executorProc) {
	t.Helper()
	pid := p.cmd.Process.Pid
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	require.NoError(t, err)
	want, err := filepath.EvalSymlinks(binary)
	require.NoError(t, err)
	require.Equal(t, want, exe, "pid %d is the executor, not a wrapper", pid)
	limits, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	require.NoError(t, err)
	var soft string
	for line := range strings.Lines(string(limits)) {
		if rest, ok := strings.CutPrefix(line, "Max address space"); ok {
			soft = strings.Fields(rest)[0]
		}
	}
	require.Equal(t, strconv.Itoa(attackAddressSpace), soft, "the executor's address-space limit:\n%s", limits)
}

// procStatus returns the kB fields of /proc/<pid>/status (VmRSS, VmHWM, VmPeak...) in bytes.
func procStatus(pid int) (map[string]int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for line := range strings.Lines(string(b)) {
		key, value, ok := strings.Cut(line, ":")
		fields := strings.Fields(value)
		if !ok || len(fields) != 2 || fields[1] != "kB" {
			continue
		}
		if n, err := strconv.ParseInt(fields[0], 10, 64); err == nil {
			out[key] = n << 10
		}
	}
	return out, nil
}

// cpuTicks returns the CPU time pid has used, user and system, in clockTicks.
func cpuTicks(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	// pid (comm) state ppid ...: comm may hold spaces, the fields after it do not.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	require.Greater(t, len(fields), 12, "/proc/%d/stat: %s", pid, b)
	utime, err := strconv.ParseInt(fields[11], 10, 64)
	require.NoError(t, err)
	stime, err := strconv.ParseInt(fields[12], 10, 64)
	require.NoError(t, err)
	return utime + stime
}

// requireCPUSettles reads pid's CPU time reads+1 times, every interval, and requires that it
// grew less than maxTicks in all: the process no longer works for the attack. A secondary check:
// what ends the work is asserted through its cancellation.
func requireCPUSettles(t *testing.T, pid, reads int, interval time.Duration, maxTicks int64) {
	t.Helper()
	first := cpuTicks(t, pid)
	samples := []int64{first}
	for range reads {
		time.Sleep(interval)
		samples = append(samples, cpuTicks(t, pid))
	}
	grew := samples[len(samples)-1] - first
	t.Logf("CPU time over the next %d reads, %s apart: %v ticks (grew %d, at most %d allowed)", reads, interval, samples, grew, maxTicks)
	require.Less(t, grew, maxTicks, "the executor kept working: its CPU time grew %d ticks (1/%d s) in %s", grew, clockTicks, time.Duration(reads)*interval)
}

// threads returns pid's number of threads (Threads in /proc/<pid>/status), 0 if unknown.
func threads(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// mb formats bytes in MB, for logs.
func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }

// attackWatch reads an executor's VmRSS and asks its GET /healthz every probeEvery while an
// attack runs; finish asserts what it saw.
type attackWatch struct {
	p     *executorProc
	pid   int
	start time.Time
	stop  chan struct{}
	done  chan struct{}

	// written by run, read once done is closed
	maxRSS    int64
	healthy   int
	unhealthy []string // what each run of failureThreshold failed probes got
	missed    int      // probes that failed alone (a stall shorter than failureThreshold probes)
}

// failureThreshold is how many probes in a row must fail for the executor to count as not
// answering, as a Kubernetes liveness probe's default (failureThreshold 3): one probe past its
// 2 s timeout on a loaded 2-core machine is a stall, not an executor that stopped answering.
const failureThreshold = 3

// watchAttack starts watching p; it probes once at once.
func watchAttack(t *testing.T, p *executorProc) *attackWatch {
	t.Helper()
	w := &attackWatch{p: p, pid: p.cmd.Process.Pid, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	t.Cleanup(func() {
		select {
		case <-w.stop:
		default:
			close(w.stop)
		}
		<-w.done
	})
	return w
}

func (w *attackWatch) run() {
	defer close(w.done)
	client := &http.Client{Timeout: 2 * time.Second}
	defer client.CloseIdleConnections()
	tick := time.NewTicker(probeEvery)
	defer tick.Stop()
	var failing []string // the failed probes in a row so far
	for {
		if st, err := procStatus(w.pid); err == nil {
			w.maxRSS = max(w.maxRSS, st["VmRSS"])
		}
		if err := healthz(client, w.p); err != nil {
			failing = append(failing, fmt.Sprintf("%s: %v", time.Since(w.start).Round(time.Millisecond), err))
			if len(failing) == failureThreshold {
				w.unhealthy = append(w.unhealthy, strings.Join(failing, "; "))
			}
		} else {
			if n := len(failing); n > 0 && n < failureThreshold {
				w.missed += n
			}
			failing = failing[:0]
			w.healthy++
		}
		select {
		case <-w.stop:
			return
		case <-tick.C:
		}
	}
}

// healthz asks p's GET /healthz once: nil when it answered 200.
func healthz(client *http.Client, p *executorProc) error {
	resp, err := client.Get(p.URL() + "/healthz")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /healthz answered %d", resp.StatusCode)
	}
	return nil
}

// finish stops the watch and asserts that the executor still runs, never left failureThreshold
// GET /healthz in a row unanswered during the attack and answers one after it, and that its resident set stayed under
// attackPeakRSS: VmRSS at every probe, VmHWM (its peak since it started) now. It returns
// VmHWM.
func (w *attackWatch) finish(t *testing.T, attack string) int64 {
	t.Helper()
	close(w.stop)
	<-w.done
	require.False(t, w.p.hasExited(), "%s: the executor died (%s)", attack, w.p.state())
	require.NoError(t, healthz(&http.Client{Timeout: 5 * time.Second}, w.p), "%s: GET /healthz after the attack", attack)
	st, err := procStatus(w.pid)
	require.NoError(t, err)
	hwm := st["VmHWM"]
	t.Logf("%s: VmHWM %s, VmRSS at most %s while probed, VmPeak %s (address space, %d threads now), %s; GET /healthz answered %d probes, missed %d alone, failed %d times in a row %d times",
		attack, mb(hwm), mb(w.maxRSS), mb(st["VmPeak"]), threads(w.pid), time.Since(w.start).Round(time.Millisecond), w.healthy, w.missed, failureThreshold, len(w.unhealthy))
	assert.Empty(t, w.unhealthy, "%s: GET /healthz failed during the attack", attack)
	assert.Positive(t, w.healthy, "%s: GET /healthz was asked", attack)
	assert.Less(t, w.maxRSS, int64(attackPeakRSS), "%s: VmRSS during the attack", attack)
	assert.Less(t, hwm, int64(attackPeakRSS), "%s: VmHWM, the executor's peak resident set", attack)
	return hwm
}

// answer is what one request got.
type answer struct {
	status int
	header http.Header
	body   []byte // at most answerKeep bytes
	size   int64  // the whole body's length
	took   time.Duration
}

// answerKeep bounds what exchange keeps of an answer's body (the rest is counted only).
const answerKeep = 4 << 20

// exchange sends one request to p and returns its answer; headers are "Name: value" pairs.
func exchange(t *testing.T, p *executorProc, method, path, contentType string, body []byte, headers ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, p.URL()+path, bytes.NewReader(body))
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	client := &http.Client{Timeout: 60 * time.Second}
	defer client.CloseIdleConnections()
	start := time.Now()
	resp, err := client.Do(req)
	require.NoError(t, err, "%s %s (%d-byte body)", method, path, len(body))
	defer resp.Body.Close()
	kept, err := io.ReadAll(io.LimitReader(resp.Body, answerKeep))
	require.NoError(t, err)
	rest, err := io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	return answer{status: resp.StatusCode, header: resp.Header, body: kept, size: int64(len(kept)) + rest, took: time.Since(start)}
}

// requireProblem requires that a is a problem+json of status and type typ and returns it.
func requireProblem(t *testing.T, a answer, status int, typ string) wire.Problem {
	t.Helper()
	require.Equal(t, status, a.status, "answer: %.500s", a.body)
	require.Equal(t, wire.ProblemContentType, a.header.Get("Content-Type"))
	var p wire.Problem
	require.NoError(t, json.Unmarshal(a.body, &p), "a problem: %.500s", a.body)
	assert.Equal(t, typ, p.Type)
	assert.Equal(t, status, p.Status)
	return p
}

// accessRecord returns the access-log record ("http request") of the request whose
// X-Request-Id was id, once p has written it; nil before. Lines that are not JSON records
// (one still being written) are skipped.
func accessRecord(p *executorProc, id string) map[string]any {
	sc := bufio.NewScanner(strings.NewReader(p.output.String()))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		if rec["msg"] == "http request" && rec["request_id"] == id {
			return rec
		}
	}
	return nil
}

// waitAccessRecord waits up to within for the access-log record of request id.
func waitAccessRecord(t *testing.T, p *executorProc, id string, within time.Duration) (map[string]any, bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if rec := accessRecord(p, id); rec != nil {
			return rec, true
		}
		if time.Now().After(deadline) || p.hasExited() {
			return nil, false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// parallel runs f(0..n-1) on n goroutines and waits for them all. f must not call t's
// FailNow (require): it reports through its return value.
func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(i)
		}()
	}
	wg.Wait()
}
