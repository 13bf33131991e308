package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/stagekind"
	"github.com/executor-dev/executor/wire"
)

// logRecords returns the JSON log records written to b so far.
func logRecords(b *servertest.Buffer) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(b.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil {
			out = append(out, rec)
		}
	}
	return out
}

// cfHoldKind is one executor's "hold" stage kind, which blocks until released or until its
// context ends, and its "note" kind, a noop that records which stages it ran.
type cfHoldKind struct {
	release   chan struct{} // closed to let hold stages finish
	entered   chan string   // task id of every hold stage started
	cancelled chan string   // "<task id>: <cause>" of every hold stage whose context ended

	mu    sync.Mutex
	notes []string // "<task id>/<stage>/<run>" of every note stage run
}

func newCFHoldKind() *cfHoldKind {
	return &cfHoldKind{release: make(chan struct{}), entered: make(chan string, 16), cancelled: make(chan string, 16)}
}

func (h *cfHoldKind) register(reg *stagekind.Registry) {
	err := reg.Register("hold", stage.HandlerFunc(func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
		h.entered <- req.TaskID
		select {
		case <-h.release:
			return json.RawMessage(`{"held":true}`), nil
		case <-ctx.Done():
			h.cancelled <- req.TaskID + ": " + fmt.Sprint(context.Cause(ctx))
			return nil, ctx.Err()
		}
	}))
	if err != nil {
		panic(err)
	}
	err = reg.Register("note", stage.HandlerFunc(func(_ context.Context, req stage.Request) (json.RawMessage, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.notes = append(h.notes, fmt.Sprintf("%s/%s/%d", req.TaskID, req.Stage, req.Run))
		return nil, nil
	}))
	if err != nil {
		panic(err)
	}
}

func (h *cfHoldKind) ran(taskID, stageName string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, n := range h.notes {
		if strings.HasPrefix(n, taskID+"/"+stageName+"/") {
			return true
		}
	}
	return false
}

// cfHTTP sends a request with an optional JSON body and decodes a JSON answer into out
// (when not nil); it returns the status code.
func cfHTTP(t testing.TB, method, url, body string, out any) int {
	t.Helper()
	status, err := cfTryHTTP(method, url, body, out)
	require.NoError(t, err, "%s %s", method, url)
	return status
}

func cfTryHTTP(method, url, body string, out any) (int, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.StatusCode, fmt.Errorf("decode %s: %w", b, err)
		}
	}
	if resp.StatusCode >= 300 {
		return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, b)
	}
	return resp.StatusCode, nil
}

// cfReadyz returns the executor's /readyz answer, 200 or 503 (degraded), (zero when it does
// not answer); safe in Eventually's goroutine.
func cfReadyz(srv *server.Server) wire.Health {
	var h wire.Health
	resp, err := http.Get(srv.URL() + "/readyz")
	if err != nil {
		return h
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusServiceUnavailable {
		return h
	}
	if json.NewDecoder(resp.Body).Decode(&h) != nil {
		return wire.Health{}
	}
	if (h.Redis == "degraded") != (resp.StatusCode == http.StatusServiceUnavailable) {
		return wire.Health{Status: fmt.Sprintf("redis %q answered %d", h.Redis, resp.StatusCode)}
	}
	return h
}

// A cut off Redis while it runs a task (the shared topology): A's self-fencing lease stops
// its run at the lease deadline, its stage call cancelled, before anybody may judge it gone,
// and A writes nothing more. B, still on Redis, then finds the task's owner gone (it reads
// INTERRUPTED, its plan PAUSED for A's loss), resumes the plan, retries the task and
// completes it. When A reaches Redis again nothing of A's changes Redis: it keeps B's state,
// which both executors then read.
func TestCutOffExecutorStopsBeforeAnotherTakesOver(t *testing.T) {
	t.Parallel()
	const ttl = time.Second
	const tenant = "tenant-x"
	rs := redistest.Start(t)
	proxy := rs.NewProxy()
	logsA := &servertest.Buffer{}
	kindA, kindB := newCFHoldKind(), newCFHoldKind()
	a := servertest.With(t, server.Config{RedisURL: proxy.URL(), LeaseTTL: ttl,
		Logger: slog.New(slog.NewJSONHandler(logsA, &slog.HandlerOptions{Level: slog.LevelDebug}))}, kindA.register)
	b := servertest.With(t, server.Config{RedisURL: rs.URL(), LeaseTTL: ttl}, kindB.register)
	defer func() {
		if t.Failed() {
			t.Logf("A's logs:\n%s", logsA.String())
		}
	}()

	// "after" is a "note" stage: a noop that records which executor ran it.
	var p wire.Plan
	body := `{"name":"conflict","stages":[{"name":"quick","kind":"noop"},{"name":"hold","kind":"hold"},{"name":"after","kind":"note"}],
	          "tenants":[{"id":"` + tenant + `"}]}`
	require.Equal(t, http.StatusCreated, cfHTTP(t, http.MethodPost, a.URL()+"/v1/plans", body, &p))
	require.Len(t, p.TaskIDs, 1)
	id := p.TaskIDs[0]
	select {
	case got := <-kindA.entered:
		require.Equal(t, id, got)
	case <-time.After(10 * time.Second):
		t.Fatal("A's run did not reach the hold stage")
	}

	proxy.Cut() // A alone loses Redis
	cut := time.Now()
	require.Eventually(t, func() bool { return cfReadyz(a).Redis == "degraded" }, 5*time.Second, 20*time.Millisecond,
		"A's heartbeat finds Redis away")
	select { // self-fenced: within the lease TTL of the cut, before anybody judges A gone
	case got := <-kindA.cancelled:
		assert.True(t, strings.HasPrefix(got, id+": "), got)
		assert.Contains(t, got, "tenant lease lost")
		t.Logf("A's hold stage ended %v after the cut: %s", time.Since(cut).Round(time.Millisecond), got)
	case <-time.After(2 * ttl):
		t.Fatal("A's run of the task did not stop within the lease TTL")
	}
	time.Sleep(time.Until(cut.Add(2*ttl + ttl/2))) // past the lease TTL and the heartbeat margin

	var seen wire.Task
	cfHTTP(t, http.MethodGet, b.URL()+"/v1/tenants/"+tenant+"/task", "", &seen)
	require.Equal(t, "INTERRUPTED", seen.Status, "B finds A's run gone")
	require.NotNil(t, seen.LastError)
	assert.Equal(t, string(stage.ClassLeaseLost), seen.LastError.Class)
	// A's loss paused the plan: the SRE resumes it, then retries.
	require.Eventually(t, func() bool {
		var pl wire.Plan
		status, err := cfTryHTTP(http.MethodGet, b.URL()+"/v1/plans/"+p.PlanID, "", &pl)
		return err == nil && status == http.StatusOK && pl.Status == "PAUSED"
	}, 5*time.Second, 20*time.Millisecond, "B pauses the plan for A's loss")
	require.Equal(t, http.StatusOK, cfHTTP(t, http.MethodPost, b.URL()+"/v1/plans/"+p.PlanID+"/resume", "", nil))

	cfHTTP(t, http.MethodPost, b.URL()+"/v1/tenants/"+tenant+"/retry", `{"fromCheckpoint":true}`, &seen)
	select {
	case got := <-kindB.entered:
		require.Equal(t, id, got)
	case <-time.After(10 * time.Second):
		t.Fatal("B's run did not reach the hold stage")
	}
	close(kindB.release)
	var done wire.Plan
	cfHTTP(t, http.MethodGet, b.URL()+"/v1/plans/"+p.PlanID+"?wait=20s", "", &done)
	require.Equal(t, "COMPLETED", done.Status)
	cfHTTP(t, http.MethodGet, b.URL()+"/v1/tasks/"+id, "", &seen)
	require.Equal(t, "COMPLETED", seen.Status)
	require.Equal(t, 2, seen.Attempt)
	require.True(t, kindB.ran(id, "after"), "B ran the last stage")

	keys := rediskey.New("")
	c := rs.Client()
	ctx := context.Background()
	wantHash, err := c.HGetAll(ctx, keys.Task(id)).Result()
	require.NoError(t, err)
	wantCkpt, err := c.Get(ctx, keys.Checkpoint(id)).Result()
	require.NoError(t, err)
	wantPlan, err := c.HGet(ctx, keys.Plan(p.PlanID), "status").Result()
	require.NoError(t, err)
	require.Equal(t, "COMPLETED", wantPlan)

	proxy.Restore()
	require.Eventually(t, func() bool { return cfReadyz(a).Redis == "ok" }, 15*time.Second, 20*time.Millisecond,
		"A leaves degraded mode")
	assert.False(t, kindA.ran(id, "after"), "A never runs the stage after hold")

	conflictLogged := func() bool {
		for _, rec := range logRecords(logsA) {
			if rec["task_id"] != id {
				continue
			}
			msg, _ := rec["msg"].(string)
			class, _ := rec["class"].(string)
			if strings.Contains(msg, "run stopped") && class == string(stage.ClassLeaseLost) {
				return true
			}
		}
		return false
	}
	assert.Eventually(t, conflictLogged, 5*time.Second, 20*time.Millisecond, "A logs that its run stopped, lease lost, with the task id")

	gotHash, err := c.HGetAll(ctx, keys.Task(id)).Result()
	require.NoError(t, err)
	gotCkpt, err := c.Get(ctx, keys.Checkpoint(id)).Result()
	require.NoError(t, err)
	assert.Equal(t, wantHash, gotHash, "Redis keeps B's task")
	assert.Equal(t, wantCkpt, gotCkpt, "and B's checkpoint")
	gotPlan, err := c.HGet(ctx, keys.Plan(p.PlanID), "status").Result()
	require.NoError(t, err)
	assert.Equal(t, wantPlan, gotPlan, "and B's plan status")

	for name, srv := range map[string]*server.Server{"A": a, "B": b} {
		var tk wire.Task
		cfHTTP(t, http.MethodGet, srv.URL()+"/v1/tenants/"+tenant+"/task", "", &tk)
		assert.Equal(t, id, tk.TaskID, name)
		assert.Equal(t, "COMPLETED", tk.Status, name)
		assert.Equal(t, 2, tk.Attempt, name)
		var pl wire.Plan
		cfHTTP(t, http.MethodGet, srv.URL()+"/v1/plans/"+p.PlanID, "", &pl)
		assert.Equal(t, "COMPLETED", pl.Status, name)
	}
	// Nothing A does afterwards changes Redis either (a late write-back, a settle).
	time.Sleep(500 * time.Millisecond)
	gotHash, err = c.HGetAll(ctx, keys.Task(id)).Result()
	require.NoError(t, err)
	assert.Equal(t, wantHash, gotHash, "Redis still keeps B's task")
}
