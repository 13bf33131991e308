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

	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/wire"
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

// SIGTERM mid-plan on Redis: the executor refuses new plans while it drains; g1 finishes its
// running stage and is handed back at the boundary (PENDING, to the front of the plan's
// queue, its checkpoint intact), g2's stage is cancelled when --shutdown-timeout runs out
// (started work: INTERRUPTED, class shutdown), g3 (queued) stays queued, never started. Every
// lease is released. Another executor started later continues g1 and g3 by itself, without
// re-running a completed stage; g2 waits for an operator's retry --from-checkpoint.
func TestSIGTERMMidPlanHandsBackToTheNextExecutor(t *testing.T) {
	t.Parallel()
	tg := &drainTarget{hits: map[string]int{}, release: make(chan struct{}), testDone: make(chan struct{})}
	targetSrv := httptest.NewServer(tg)
	t.Cleanup(targetSrv.Close)
	t.Cleanup(func() { close(tg.testDone) })
	rs := redistest.Start(t)

	planFile := writePlan(t, wire.PlanRequest{
		Name: "sigterm-mid-plan", MaxConcurrency: 2, Stages: httpStages(targetSrv.URL, "30s", "s1", "s2", "s3"),
		Tenants: []wire.TenantRequest{{ID: "g1"}, {ID: "g2"}, {ID: "g3"}},
	})
	a := startExecutor(t, "A", rs.URL(), "--shutdown-timeout", "2s")
	r := a.cli(t, "submit", "-f", planFile, "-o", "json")
	requireExit(t, 0, r)
	submitted := decode[wire.Plan](t, r.stdout)
	require.Eventually(t, func() bool { return tg.count("g1/s2") == 1 && tg.count("g2/s2") == 1 },
		pollTimeout, 10*time.Millisecond, "g1 and g2 reached s2")

	require.NoError(t, a.cmd.Process.Signal(syscall.SIGTERM))
	signalled := time.Now()
	// Draining: new work is refused with 503.
	other := writePlan(t, wire.PlanRequest{Name: "late", Stages: httpStages(targetSrv.URL, "5s", "s1"), Tenants: []wire.TenantRequest{{ID: "late-1"}}})
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
	assert.Equal(t, 0, tg.count("g3/s1"), "a queued task does not start after SIGTERM")
	keys := rediskey.New("")
	ctx := context.Background()
	for _, tenant := range []string{"g1", "g2", "g3"} {
		n, err := rs.Client().Exists(ctx, keys.TenantLock(tenant)).Result()
		require.NoError(t, err)
		assert.Zero(t, n, "%s's lease was released", tenant)
	}
	// As A left them, read from Redis before another executor starts.
	want := map[int]struct{ status, stage string }{0: {"PENDING", "2"}, 1: {"INTERRUPTED", "1"}, 2: {"PENDING", "0"}}
	for i, w := range want {
		h, err := rs.Client().HMGet(ctx, keys.Task(submitted.TaskIDs[i]), "status", "stage").Result()
		require.NoError(t, err)
		assert.Equal(t, []any{w.status, w.stage}, h, "g%d as A left it", i+1)
	}
	queued, err := rs.Client().ZRange(ctx, keys.DispatchQueue(submitted.PlanID), 0, -1).Result()
	require.NoError(t, err)
	assert.Equal(t, []string{submitted.TaskIDs[0], submitted.TaskIDs[2]}, queued,
		"g1 handed back to the front of the queue, g3 still queued behind it")

	b := startExecutor(t, "B", rs.URL())
	for _, tenant := range []string{"g1", "g3"} {
		pollTenant(t, b, tenant, tenant+" continued by B without an operator", nil,
			func(tk wire.Task) bool { return tk.Status == "COMPLETED" })
	}
	r = b.cli(t, "status", "--tenant", "g2", "-o", "json")
	requireExit(t, 0, r)
	g2 := decode[wire.Task](t, r.stdout)
	assert.Equal(t, "INTERRUPTED", g2.Status, "a stage cut short is started work: it waits for an operator")
	require.NotNil(t, g2.LastError)
	assert.Equal(t, "shutdown", g2.LastError.Class)
	require.NotNil(t, g2.Checkpoint)
	assert.Equal(t, []string{"s1"}, g2.Checkpoint.CompletedStages)
	requireExit(t, 0, b.cli(t, "retry", "--tenant", "g2", "--from-checkpoint"))
	r = b.cli(t, "plan", "show", submitted.PlanID, "--watch", "-o", "json")
	requireExit(t, 0, r)
	assert.Equal(t, "COMPLETED", decode[wire.Plan](t, r.stdout).Status)
	for key, n := range map[string]int{"g1/s1": 1, "g1/s2": 1, "g1/s3": 1, "g2/s1": 1, "g2/s2": 2, "g2/s3": 1, "g3/s1": 1, "g3/s3": 1} {
		assert.Equal(t, n, tg.count(key), key)
	}
}
