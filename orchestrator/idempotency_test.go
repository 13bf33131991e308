package orchestrator_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/domain/task"
)

// keyTarget answers the http stages: /deploy 503 at its first request, /check 400 at its first;
// 200 otherwise. It records the Idempotency-Key of every request per path.
type keyTarget struct {
	mu   sync.Mutex
	keys map[string][]string
}

func (k *keyTarget) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	path := strings.Trim(r.URL.Path, "/")
	k.mu.Lock()
	k.keys[path] = append(k.keys[path], r.Header.Get("Idempotency-Key"))
	n := len(k.keys[path])
	k.mu.Unlock()
	switch {
	case path == "deploy" && n == 1:
		w.WriteHeader(http.StatusServiceUnavailable)
	case path == "check" && n == 1:
		w.WriteHeader(http.StatusBadRequest)
	}
}

func (k *keyTarget) of(path string) []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.keys[path]...)
}

// The http stage sends one Idempotency-Key per stage per run: the attempt retried after a 503
// carries the first attempt's key; an operator's retry of the task (a new run) a new one.
func TestHTTPStageKeepsItsIdempotencyKeyAcrossAttemptsOfARun(t *testing.T) {
	t.Parallel()
	target := &keyTarget{keys: map[string][]string{}}
	srv := httptest.NewServer(target)
	t.Cleanup(srv.Close)
	h := newHarness(t, 2)
	retry := stage.Policy{MaxAttempts: 3, InitialBackoff: 10 * time.Millisecond, Jitter: stage.JitterNone}
	p := h.submit(t, app.SubmitRequest{Tenants: tenants("ik", 1), Stages: []stage.Spec{
		{Name: "deploy", Kind: "http", Params: map[string]any{"method": "POST", "url": srv.URL + "/deploy"}, Retry: retry},
		{Name: "check", Kind: "http", Params: map[string]any{"url": srv.URL + "/check"}, Retry: stage.Policy{MaxAttempts: 1}},
	}})
	require.Equal(t, plan.Failed, h.wait(t, p.ID()).Plan.Status(), "check refused run 1")
	tk := h.tenantTask(t, "ik-000")
	require.Equal(t, task.Failed, tk.Status())

	_, err := h.svc.RetryTenant(context.Background(), "ik-000", false) // run 2, from stage 0
	require.NoError(t, err)
	require.Equal(t, plan.Completed, h.wait(t, p.ID()).Plan.Status())

	run1 := p.ID() + "/" + tk.ID() + "/deploy/1"
	run2 := p.ID() + "/" + tk.ID() + "/deploy/2"
	assert.Equal(t, []string{run1, run1, run2}, target.of("deploy"), "503, its retry (same key), then run 2 (new key)")
	assert.Equal(t, []string{p.ID() + "/" + tk.ID() + "/check/1", p.ID() + "/" + tk.ID() + "/check/2"}, target.of("check"))
}
