package promtest_test

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/promtest"
)

const wait = 30 * time.Second

func equals(want float64) func(float64) bool { return func(v float64) bool { return v == want } }

// TestMain fails the run when a test left a goroutine or a child process behind once every
// test (and its cleanups) ended.
func TestMain(m *testing.M) {
	before := runtime.NumGoroutine()
	code := m.Run()
	if code == 0 {
		if err := leftBehind(before); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// leftBehind waits up to 2 s for the goroutines to be back to before and no child process to
// run.
func leftBehind(before int) error {
	var err error
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<20)
			err = fmt.Errorf("goroutine leak: %d goroutines, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
			continue
		}
		if kids := children(); len(kids) > 0 {
			err = fmt.Errorf("child processes left running: %v", kids)
			continue
		}
		return nil
	}
	return err
}

// children lists this process's children (pid and command), from /proc.
func children() []string {
	var kids []string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after its ')'.
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[1] == strconv.Itoa(os.Getpid()) {
			kids = append(kids, d.Name()+" "+s[strings.IndexByte(s, '(')+1:strings.LastIndexByte(s, ')')])
		}
	}
	return kids
}

// A gauge the test sets is what Prometheus answers once it scraped it, and again after a
// change.
func TestPrometheusScrapesWhatTheTestSets(t *testing.T) {
	t.Parallel()
	exp := promtest.StartExporter(t)
	prom := promtest.Start(t, exp.Addr())
	require.Equal(t, "http://"+prom.Addr(), prom.URL())
	a := map[string]string{"tenant": "a"}
	exp.Set("tenant_error_ratio", a, 0.5)
	prom.WaitValue(t, `tenant_error_ratio{tenant="a"}`, equals(0.5), wait)
	exp.Set("tenant_error_ratio", a, 0.01)
	prom.WaitValue(t, `tenant_error_ratio{tenant="a"}`, equals(0.01), wait)
	vals, err := prom.Query(`up{job="exporter", instance="` + exp.Addr() + `"}`)
	require.NoError(t, err)
	require.Equal(t, []float64{1}, vals)
}

// A killed server answers nothing; restarted, it is on the same port with the data it
// scraped before, and has scraped again by the time Restart returns. Stopping is idempotent.
func TestKillAndRestartKeepThePortAndTheData(t *testing.T) {
	t.Parallel()
	exp := promtest.StartExporter(t)
	a := map[string]string{"tenant": "a"}
	exp.Set("tenant_error_ratio", a, 0.5)
	prom := promtest.Start(t, exp.Addr())
	addr := prom.Addr()
	prom.WaitValue(t, `tenant_error_ratio{tenant="a"}`, equals(0.5), wait)

	prom.Kill()
	_, err := prom.Query("up")
	require.Error(t, err, "killed: nothing answers")
	exp.Set("tenant_error_ratio", a, 0.25)
	restarted := time.Now()
	prom.Restart()
	require.Equal(t, addr, prom.Addr())
	scrapedSince(t, prom, restarted)
	prom.WaitValue(t, `tenant_error_ratio{tenant="a"}`, equals(0.25), wait)
	prom.WaitValue(t, `max_over_time(tenant_error_ratio{tenant="a"}[10m])`, equals(0.5), wait) // scraped before the kill

	prom.Stop()
	prom.Stop()
	_, err = prom.Query("up")
	require.Error(t, err, "stopped: nothing answers")
}

// scrapedSince requires the server's up to be 1 and from a scrape made after since: Restart
// returns once the new process scraped, not on the up the killed one left in the data.
func scrapedSince(t *testing.T, prom *promtest.Server, since time.Time) {
	t.Helper()
	vals, err := prom.Query(`up`)
	require.NoError(t, err)
	require.Equal(t, []float64{1}, vals)
	vals, err = prom.Query(`timestamp(up)`)
	require.NoError(t, err)
	require.Len(t, vals, 1)
	require.GreaterOrEqual(t, vals[0], float64(since.UnixMilli())/1000)
}

// A series the exporter deletes goes stale at Prometheus's next scrape: an instant query no
// longer answers it, while the others stay.
func TestDeletedSeriesGoesStale(t *testing.T) {
	t.Parallel()
	exp := promtest.StartExporter(t)
	prom := promtest.Start(t, exp.Addr())
	a, b := map[string]string{"tenant": "a"}, map[string]string{"tenant": "b"}
	exp.Set("tenant_error_ratio", a, 0.5)
	exp.Set("tenant_error_ratio", b, 0.1)
	prom.WaitValue(t, `count(tenant_error_ratio)`, equals(2), wait)

	exp.Delete("tenant_error_ratio", a)
	exp.Delete("never_set", a) // a no-op
	prom.WaitValue(t, `count(tenant_error_ratio{tenant="a"}) or vector(0)`, equals(0), wait)
	vals, err := prom.Query(`tenant_error_ratio`)
	require.NoError(t, err)
	require.Equal(t, []float64{0.1}, vals, "tenant b's series stays")
}

// Prometheus starts ready with no target, and with several.
func TestTargets(t *testing.T) {
	t.Parallel()
	none := promtest.Start(t)
	none.WaitValue(t, `vector(1)`, equals(1), wait)
	e1, e2 := promtest.StartExporter(t), promtest.StartExporter(t)
	two := promtest.Start(t, e1.Addr(), e2.Addr(), e1.Addr())
	vals, err := two.Query(`up{job="exporter"}`)
	require.NoError(t, err)
	require.Equal(t, []float64{1, 1}, vals, "both scraped up by the time Start returned")
}

// fatalTB records the first Fatal of a harness function run in fatally.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatal(args ...any) { f.msg = fmt.Sprint(args...); runtime.Goexit() }

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// fatally runs f in a goroutine of its own, which tb's Fatal ends, and returns what it said
// ("" if nothing).
func fatally(tb *fatalTB, f func()) string {
	tb.msg = ""
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
	return tb.msg
}

// A missing binary fails the test with the install hint; it does not skip.
func TestMissingBinaryFailsWithTheInstallHint(t *testing.T) {
	t.Setenv(promtest.BinEnv, t.TempDir()+"/no-prometheus")
	tb := &fatalTB{TB: t}
	msg := fatally(tb, func() { promtest.Start(tb) })
	require.Contains(t, msg, "apt-get install -y --no-install-recommends prometheus")
	require.Contains(t, msg, "no-prometheus")
}

// A gauge's label names are those of its first Set.
func TestExporterRefusesOtherLabelNames(t *testing.T) {
	t.Parallel()
	tb := &fatalTB{TB: t}
	exp := promtest.StartExporter(tb)
	require.Empty(t, fatally(tb, func() {
		exp.Set("g", map[string]string{"b": "1", "a": "2"}, 1)
		exp.Set("g", map[string]string{"a": "3", "b": "4"}, 2) // the same names, in another order
	}))
	require.Contains(t, fatally(tb, func() { exp.Set("g", map[string]string{"a": "1"}, 1) }), "[a b]")
	require.Contains(t, fatally(tb, func() { exp.Delete("g", map[string]string{"c": "1"}) }), "[a b]")
}
