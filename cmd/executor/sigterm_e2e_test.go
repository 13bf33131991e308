package main_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/api"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redistest"
)

// drainTarget answers every stage at once but two: g1's s2 waits until release is closed,
// g2's first s2 until its connection drops (the executor cancelled the stage).
type drainTarget struct {
	mu       sync.Mutex
	hits     map[string]int
	release  chan struct{}
	testDone chan struct{}
}

func (d *drainTarget) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body) // then the server watches the connection
	key := strings.Trim(r.URL.Path, "/")
	d.mu.Lock()
	d.hits[key]++
	n := d.hits[key]
	d.mu.Unlock()
	switch {
	case key == "g1/s2":
		select {
		case <-d.release:
		case <-d.testDone:
		}
	case key == "g2/s2" && n == 1:
		select {
		case <-r.Context().Done():
			return
		case <-d.testDone:
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"ok":true}`)
}

func (d *drainTarget) count(key string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.hits[key]
}

// SIGTERM mid-plan: the executor refuses new plans while it drains; g1 finishes its running
// stage and stops at the boundary, g2's stage is cancelled when --shutdown-timeout runs out,
// g3 (queued) never starts. All three are INTERRUPTED with their checkpoints intact, their
// leases released, and after a restart `retry --from-checkpoint` completes each without
// re-running a completed stage.
func TestSIGTERMMidPlanInterruptsThenRetryCompletes(t *testing.T) {
	t.Parallel()
	tg := &drainTarget{hits: map[string]int{}, release: make(chan struct{}), testDone: make(chan struct{})}
	targetSrv := httptest.NewServer(tg)
	t.Cleanup(targetSrv.Close)
	t.Cleanup(func() { close(tg.testDone) })
	rs := redistest.Start(t)

	planFile := writePlan(t, api.PlanRequest{
		Name: "sigterm-mid-plan", MaxConcurrency: 2, Stages: httpStages(targetSrv.URL, "30s", "s1", "s2", "s3"),
		Tenants: []api.TenantRequest{{ID: "g1"}, {ID: "g2"}, {ID: "g3"}},
	})
	a := startExecutor(t, "A", rs.URL(), "--shutdown-timeout", "2s")
	r := a.cli(t, "submit", "-f", planFile, "-o", "json")
	requireExit(t, 0, r)
	submitted := decode[api.Plan](t, r.stdout)
	require.Eventually(t, func() bool { return tg.count("g1/s2") == 1 && tg.count("g2/s2") == 1 },
		pollTimeout, 10*time.Millisecond, "g1 and g2 reached s2")

	require.NoError(t, a.cmd.Process.Signal(syscall.SIGTERM))
	signalled := time.Now()
	// Draining: queries still work, new work is refused with 503.
	pollTenant(t, a, "g3", "g3 interrupted while A drains", nil, func(tk api.Task) bool { return tk.Status == "INTERRUPTED" })
	other := writePlan(t, api.PlanRequest{Name: "late", Stages: httpStages(targetSrv.URL, "5s", "s1"), Tenants: []api.TenantRequest{{ID: "late-1"}}})
	r = a.cli(t, "submit", "-f", other)
	requireExit(t, 1, r)
	assert.Contains(t, r.stderr, "503")
	close(tg.release) // g1's s2 ends within the timeout: g1 stops before s3

	select {
	case <-a.exited:
	case <-time.After(15 * time.Second):
		require.FailNow(t, "A did not exit after SIGTERM")
	}
	require.NoError(t, a.err, "a graceful shutdown exits 0\n%s", a.output.String())
	assert.GreaterOrEqual(t, time.Since(signalled), 2*time.Second, "g2's stage ran until the shutdown timeout")
	assert.Equal(t, 0, tg.count("g1/s3"), "no stage starts after SIGTERM")
	keys := rediskey.New("")
	for _, tenant := range []string{"g1", "g2", "g3"} {
		n, err := rs.Client().Exists(context.Background(), keys.TenantLock(tenant)).Result()
		require.NoError(t, err)
		assert.Zero(t, n, "%s's lease was released", tenant)
	}

	b := startExecutor(t, "B", rs.URL())
	want := map[string][]string{"g1": {"s1", "s2"}, "g2": {"s1"}, "g3": nil}
	for tenant, done := range want {
		r = b.cli(t, "status", "--tenant", tenant, "-o", "json")
		requireExit(t, 0, r)
		tk := decode[api.Task](t, r.stdout)
		assert.Equal(t, "INTERRUPTED", tk.Status, tenant)
		require.NotNil(t, tk.LastError, tenant)
		assert.Equal(t, "shutdown", tk.LastError.Class, tenant)
		assert.Equal(t, len(done), tk.CurrentStage, tenant)
		if done != nil {
			require.NotNil(t, tk.Checkpoint, tenant)
			assert.Equal(t, done, tk.Checkpoint.CompletedStages, tenant)
		}
		requireExit(t, 0, b.cli(t, "retry", "--tenant", tenant, "--from-checkpoint"))
	}
	r = b.cli(t, "plan", "show", submitted.PlanID, "--watch", "-o", "json")
	requireExit(t, 0, r)
	assert.Equal(t, "COMPLETED", decode[api.Plan](t, r.stdout).Status)
	for key, n := range map[string]int{"g1/s1": 1, "g1/s2": 1, "g1/s3": 1, "g2/s1": 1, "g2/s2": 2, "g2/s3": 1, "g3/s1": 1, "g3/s3": 1} {
		assert.Equal(t, n, tg.count(key), key)
	}
}
