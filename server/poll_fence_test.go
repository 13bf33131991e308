package server_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// A shared executor cut off from Redis self-fences its runs before their leases can expire:
// an http stage polling an async API stops polling then, so no poll of the tenant's stale run
// goes on while another executor may take it over (issue 31's promise, for issue 32's poll).
func TestASelfFencedRunStopsPolling(t *testing.T) {
	t.Parallel()
	var (
		posts atomic.Int32
		mu    sync.Mutex
		polls []time.Time
	)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write([]byte(`{"id":"d-1"}`))
			return
		}
		mu.Lock()
		polls = append(polls, time.Now())
		mu.Unlock()
		_, _ = w.Write([]byte(`{"state":"pending"}`))
	}))
	t.Cleanup(api.Close)
	pollCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(polls)
	}
	rs := redistest.Start(t)
	proxy := rs.NewFaultProxy(redistest.Faults{})
	c := newDGClient(t, servertest.With(t, server.Config{RedisURL: proxy.URL(), LeaseTTL: 2 * time.Second, Logger: dgLogger()}))

	req := wire.PlanRequest{Name: "poll-fence", Stages: []wire.StageRequest{{Name: "deploy", Kind: "http", Timeout: "5m",
		Params: map[string]any{"method": "POST", "url": api.URL + "/deploys", "poll": map[string]any{
			"url": api.URL + "/deploys/{{.Response.body.id}}", "interval": "100ms", "until": `body.state == "ready"`,
		}}}},
		Tenants: []wire.TenantRequest{{ID: "pf-1"}}}
	var p wire.Plan
	require.Equal(t, http.StatusCreated, c.do(http.MethodPost, "/v1/plans", req, &p).StatusCode)
	require.Eventually(t, func() bool { return pollCount() >= 3 }, dgReady, 20*time.Millisecond, "the stage polls")

	proxy.Cut()
	cut := time.Now()
	require.Eventually(t, func() bool {
		n := pollCount()
		time.Sleep(600 * time.Millisecond) // six intervals without a poll: it stopped
		return pollCount() == n
	}, 10*time.Second, 10*time.Millisecond, "the stale run went on polling")
	mu.Lock()
	last := polls[len(polls)-1]
	mu.Unlock()
	t.Logf("the last poll was sent %v after the cut (lease TTL 2s)", last.Sub(cut).Round(10*time.Millisecond))
	assert.Less(t, last.Sub(cut), 2*2*time.Second, "stopped at the self-fencing deadline")
	assert.Equal(t, int32(1), posts.Load())
}
