package main_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/wire"
)

// pollingAPI is an async deploy API: POST /deploys/<tenant> starts a deploy (202 {"id"}), GET
// /status/<id> answers {"state":"pending"} until ready is set, then {"state":"ready"}.
type pollingAPI struct {
	ready atomic.Bool
	mu    sync.Mutex
	posts map[string]int // by tenant
	polls map[string]int // by deploy id
}

func (a *pollingAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/deploys/"):
		tenant := strings.TrimPrefix(r.URL.Path, "/deploys/")
		a.posts[tenant]++
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"id":"dep-` + tenant + `","state":"pending"}`))
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/status/"):
		a.polls[strings.TrimPrefix(r.URL.Path, "/status/")]++
		if a.ready.Load() {
			_, _ = w.Write([]byte(`{"state":"ready"}`))
			return
		}
		_, _ = w.Write([]byte(`{"state":"pending"}`))
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func (a *pollingAPI) counts(tenant string) (posts, polls int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.posts[tenant], a.polls["dep-"+tenant]
}

// kill -9 of the executor while its http stage polls an async deploy API: the first response
// was checkpointed before the first poll, so the SRE's retry --from-checkpoint through
// another executor polls again, and the deploy request is sent exactly once in all.
func TestKilledWhilePollingRetryFromCheckpointSendsTheDeployOnce(t *testing.T) {
	t.Parallel()
	api := &pollingAPI{posts: map[string]int{}, polls: map[string]int{}}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	rs := redistest.Start(t)
	a := startExecutor(t, "A", rs.URL(), "--name", "poll-a")
	b := startExecutor(t, "B", rs.URL(), "--name", "poll-b")

	tenants := []string{"pk-1", "pk-2"}
	req := wire.PlanRequest{Name: "poll-kill", MaxConcurrency: 2, Stages: []wire.StageRequest{
		{Name: "deploy", Kind: "http", Timeout: "5m", Params: map[string]any{
			"method": "POST", "url": srv.URL + "/deploys/{{.TenantID}}", "body": `{"version":"v2"}`,
			"poll": map[string]any{
				"url": srv.URL + "/status/{{.Response.body.id}}", "interval": "100ms", "timeout": "5m",
				"until": `body.state == "ready"`, "failWhen": `body.state == "failed"`,
			},
		}},
		{Name: "after", Kind: "noop"},
	}}
	for _, tn := range tenants {
		req.Tenants = append(req.Tenants, wire.TenantRequest{ID: tn})
	}
	pl := submitJSON(t, a, req)
	require.Eventually(t, func() bool {
		for _, tn := range tenants {
			if _, polls := api.counts(tn); polls < 2 {
				return false
			}
		}
		return true
	}, pollTimeout, 20*time.Millisecond, "both tenants are polling")
	for _, tn := range tenants {
		r := b.cli(t, "checkpoint", "--tenant", tn, "-o", "json")
		requireExit(t, 0, r)
		cp := decode[wire.Checkpoint](t, r.stdout)
		require.NotNil(t, cp.Progress, "%s: the first response is checkpointed before polling: %s", tn, r.stdout)
		assert.Equal(t, "deploy", cp.Progress.Stage)
		var first struct {
			Status int            `json:"status"`
			Body   map[string]any `json:"body"`
		}
		require.NoError(t, json.Unmarshal(cp.Progress.Data, &first))
		assert.Equal(t, http.StatusAccepted, first.Status)
		assert.Equal(t, "dep-"+tn, first.Body["id"])
	}
	for _, tk := range tasksOf(t, b, pl.PlanID) {
		require.Equal(t, "poll-a", tk.Executor, "A runs %s", tk.TenantID)
	}

	a.kill(t)
	resumeAfterLoss(t, b, pl.PlanID)
	for _, tk := range tasksOf(t, b, pl.PlanID) {
		require.Equal(t, "INTERRUPTED", tk.Status, tk.TenantID)
	}
	api.ready.Store(true)
	for _, tn := range tenants {
		requireExit(t, 0, b.cli(t, "retry", "--tenant", tn, "--from-checkpoint"))
	}
	assert.Equal(t, "COMPLETED", watchPlan(t, b, pl.PlanID).Status)
	for _, tk := range tasksOf(t, b, pl.PlanID) {
		assert.Equal(t, "COMPLETED", tk.Status, tk.TenantID)
		assert.Equal(t, "poll-b", tk.Executor, "B ran the retry of %s", tk.TenantID)
		posts, polls := api.counts(tk.TenantID)
		assert.Equal(t, 1, posts, "%s: the deploy request was sent exactly once", tk.TenantID)
		assert.GreaterOrEqual(t, polls, 3, "%s: polled before the kill and after the retry", tk.TenantID)
	}
	r := b.cli(t, "checkpoint", "--tenant", tenants[0], "-o", "json")
	requireExit(t, 0, r)
	assert.Nil(t, decode[wire.Checkpoint](t, r.stdout).Progress, "a completed stage leaves no progress")
}
