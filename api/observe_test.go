package api_test

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/api"
	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/infra/lock"
	"github.com/executor-dev/executor/infra/memrepo"
	"github.com/executor-dev/executor/orchestrator"
	"github.com/executor-dev/executor/server/servertest"
)

// memoryService returns the use cases over a fresh in-memory store.
func memoryService(t *testing.T) *app.Service {
	t.Helper()
	db := memrepo.New()
	svc, _ := apptest.New(t, apptest.Stores{
		Creator: db, Plans: db.Plans(), Tasks: db.Tasks(), Checkpoints: db.Checkpoints(), Locker: lock.NewMemory(),
	}, nil, orchestrator.Config{})
	return svc
}

// observed is one call of Options.ObserveRequest.
type observed struct {
	route, method string
	code          int
}

// observer records the calls of Options.ObserveRequest.
type observer struct {
	mu    sync.Mutex
	calls []observed
}

func (o *observer) observe(route, method string, code int, d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, observed{route, method, code})
}

func (o *observer) all() []observed {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]observed(nil), o.calls...)
}

// serveOnce sends one request to h and returns the recorded response.
func serveOnce(t *testing.T, h http.Handler, method, target string, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestObserveReportsRoutePatternMethodAndCode(t *testing.T) {
	t.Parallel()
	metricsStub := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "# metrics\n") })
	tests := []struct {
		name   string
		method string
		target string
		want   observed
	}{
		{"pattern, not the raw path", http.MethodGet, "/v1/plans/not-a-ulid", observed{"/v1/plans/{planId}", "GET", 400}},
		{"nested pattern", http.MethodPost, "/v1/plans/x:y/cancel", observed{"/v1/plans/{planId}/cancel", "POST", 400}},
		{"tenant pattern", http.MethodGet, "/v1/tenants/a:b/task", observed{"/v1/tenants/{tenantId}/task", "GET", 400}},
		{"probe", http.MethodGet, "/healthz", observed{"/healthz", "GET", 200}},
		{"scrape", http.MethodGet, "/metrics", observed{"/metrics", "GET", 200}},
		{"unknown path", http.MethodGet, "/nope/secret-id", observed{api.UnmatchedRoute, "GET", 404}},
		{"unknown path under a sub-router", http.MethodGet, "/v1/plans/abc/nope", observed{api.UnmatchedRoute, "GET", 404}},
		{"method not allowed", http.MethodDelete, "/healthz", observed{api.UnmatchedRoute, "DELETE", 405}},
		{"unknown method is bounded", "BREW", "/v1/plans", observed{api.UnmatchedRoute, "OTHER", 405}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			obs := &observer{}
			h := api.NewRouter(memoryService(t), api.Options{Logger: slog.New(slog.DiscardHandler), Metrics: metricsStub, ObserveRequest: obs.observe})
			rec := serveOnce(t, h, tt.method, tt.target)
			require.Equal(t, tt.want.code, rec.Code, rec.Body.String())
			assert.Equal(t, []observed{tt.want}, obs.all())
		})
	}
}

func TestObserveCountsAPanicAsA500(t *testing.T) {
	t.Parallel()
	obs := &observer{}
	panicky := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })
	h := api.NewRouter(nil, api.Options{Logger: slog.New(slog.DiscardHandler), Console: panicky, ObserveRequest: obs.observe})
	rec := serveOnce(t, h, http.MethodGet, "/")
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	assert.Equal(t, []observed{{"/", "GET", 500}}, obs.all())
}

func TestAccessLogHasOneRecordPerRequest(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	h := api.NewRouter(nil, api.Options{Logger: log})

	rec := serveOnce(t, h, http.MethodGet, "/v1/plans/not-a-ulid?token=query-secret",
		"Authorization", "Bearer header-secret", api.RequestIDHeader, "req-42")
	require.Equal(t, http.StatusBadRequest, rec.Code)

	records := servertest.JSONRecords(t, buf.String())
	require.Len(t, records, 1, buf.String())
	r := records[0]
	assert.Equal(t, "INFO", r["level"])
	assert.Equal(t, "http request", r["msg"])
	assert.Equal(t, "req-42", r["request_id"])
	assert.Equal(t, "GET", r["method"])
	assert.Equal(t, "/v1/plans/{planId}", r["route"])
	assert.Equal(t, "/v1/plans/not-a-ulid", r["path"])
	assert.Equal(t, 400.0, r["status"])
	assert.Equal(t, float64(rec.Body.Len()), r["bytes"])
	assert.Contains(t, r, "duration_ms")
	assert.NotContains(t, buf.String(), "secret", "a query string or header reached the log")
}

func TestAccessLogSkipsProbesAndScrapes(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	obs := &observer{}
	metricsStub := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "# metrics\n") })
	h := api.NewRouter(nil, api.Options{Logger: slog.New(slog.NewJSONHandler(&buf, nil)), Metrics: metricsStub, ObserveRequest: obs.observe})
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		require.Equal(t, http.StatusOK, serveOnce(t, h, http.MethodGet, path).Code, path)
	}
	assert.Empty(t, buf.String(), "probes and scrapes are not access-logged")
	assert.Len(t, obs.all(), 3, "probes and scrapes are still measured")

	require.Equal(t, http.StatusMethodNotAllowed, serveOnce(t, h, http.MethodPost, "/healthz").Code)
	assert.Len(t, servertest.JSONRecords(t, buf.String()), 1, "a POST /healthz is no probe: it is logged")
}

// A path carrying an escaped CR LF must not forge a second log record: slog's handlers
// escape control characters, so the record stays on one line.
func TestAccessLogPathWithCRLFStaysOneRecord(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handler func(w io.Writer) slog.Handler
	}{
		{"text", func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, nil) }},
		{"json", func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			h := api.NewRouter(memoryService(t), api.Options{Logger: slog.New(tt.handler(&buf))})
			rec := serveOnce(t, h, http.MethodGet, "/v1/tenants/a%0D%0Ainjected/task")
			require.Equal(t, http.StatusBadRequest, rec.Code, "the tenant id is invalid")

			out := buf.String()
			assert.Equal(t, 1, strings.Count(out, "\n"), "log: %q", out)
			assert.NotContains(t, out, "\r", "log: %q", out)
			assert.Contains(t, out, "injected")
			assert.Contains(t, out, "/v1/tenants/{tenantId}/task")
		})
	}
}

// Server-sent events still stream through the middleware: the client reads the first
// event while the handler is still running, and the request is logged once it ends.
func TestObserveKeepsStreaming(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	stream := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		flusher, ok := w.(http.Flusher)
		if !ok {
			http.Error(w, "no flusher", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: first\n\n")
		flusher.Flush()
		<-release
	})
	logs := &servertest.Buffer{}
	obs := &observer{}
	srv := httptest.NewServer(api.NewRouter(nil, api.Options{
		Logger: slog.New(slog.NewJSONHandler(logs, nil)), Console: stream, ObserveRequest: obs.observe,
	}))
	t.Cleanup(srv.Close)

	res, err := http.Get(srv.URL + "/")
	require.NoError(t, err)
	defer res.Body.Close()
	line, err := bufio.NewReader(res.Body).ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "data: first\n", line)
	assert.Empty(t, logs.String(), "logged before the stream ended")

	close(release)
	require.Eventually(t, func() bool { return len(obs.all()) == 1 }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, observed{"/", "GET", 200}, obs.all()[0])
	// The access-log line is written after the observation: wait for it too.
	require.Eventually(t, func() bool { return strings.Count(logs.String(), "\n") >= 1 }, 5*time.Second, 10*time.Millisecond)
	records := servertest.JSONRecords(t, logs.String())
	require.Len(t, records, 1)
	assert.Equal(t, float64(len("data: first\n\n")), records[0]["bytes"])
}
