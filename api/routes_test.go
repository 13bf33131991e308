package api_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/api"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

func TestPathAndQueryValidation(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	unknown := ulid.Make().String()

	tests := []struct {
		name   string
		method string
		path   string
		status int
		field  string
	}{
		{"plan id not a ULID", http.MethodGet, "/v1/plans/not-a-ulid", http.StatusBadRequest, "planId"},
		{"plan tasks with a bad plan id", http.MethodGet, "/v1/plans/not-a-ulid/tasks", http.StatusBadRequest, "planId"},
		{"pause with a bad plan id", http.MethodPost, "/v1/plans/not-a-ulid/pause", http.StatusBadRequest, "planId"},
		{"cancel with a bad plan id", http.MethodPost, "/v1/plans/x:y/cancel", http.StatusBadRequest, "planId"},
		{"task id not a ULID", http.MethodGet, "/v1/tasks/not-a-ulid", http.StatusBadRequest, "taskId"},
		{"tenant id with a colon", http.MethodGet, "/v1/tenants/a:b/task", http.StatusBadRequest, "tenantId"},
		{"tenant id with an escaped brace", http.MethodGet, "/v1/tenants/a%7Bb%7D/task", http.StatusBadRequest, "tenantId"},
		{"tenant id with an escaped slash", http.MethodGet, "/v1/tenants/a%2Fb/checkpoint", http.StatusBadRequest, "tenantId"},
		{"tenant id with a star", http.MethodPost, "/v1/tenants/a*/retry", http.StatusBadRequest, "tenantId"},
		{"tenant id with a control character", http.MethodPost, "/v1/tenants/a%00b/pause", http.StatusBadRequest, "tenantId"},
		{"tenant id too long", http.MethodGet, "/v1/tenants/" + strings.Repeat("a", 129) + "/task", http.StatusBadRequest, "tenantId"},
		{"unknown tenant", http.MethodGet, "/v1/tenants/nobody/task", http.StatusNotFound, ""},
		{"unknown tenant checkpoint", http.MethodGet, "/v1/tenants/nobody/checkpoint", http.StatusNotFound, ""},
		{"unknown tenant pause", http.MethodPost, "/v1/tenants/nobody/pause", http.StatusNotFound, ""},
		{"unknown tenant resume", http.MethodPost, "/v1/tenants/nobody/resume", http.StatusNotFound, ""},
		{"unknown tenant cancel", http.MethodPost, "/v1/tenants/nobody/cancel", http.StatusNotFound, ""},
		{"unknown tenant retry", http.MethodPost, "/v1/tenants/nobody/retry", http.StatusNotFound, ""},
		{"unknown tenant approve", http.MethodPost, "/v1/tenants/nobody/approve", http.StatusNotFound, ""},
		{"unknown tenant reject", http.MethodPost, "/v1/tenants/nobody/reject", http.StatusNotFound, ""},
		{"unknown tenant lock", http.MethodGet, "/v1/tenants/nobody/lock", http.StatusNotFound, ""},
		{"unknown tenant unlock", http.MethodPost, "/v1/tenants/nobody/unlock", http.StatusNotFound, ""},
		{"approve with a bad tenant id", http.MethodPost, "/v1/tenants/a:b/approve", http.StatusBadRequest, "tenantId"},
		{"reject with a bad tenant id", http.MethodPost, "/v1/tenants/a*/reject", http.StatusBadRequest, "tenantId"},
		{"lock with a bad tenant id", http.MethodGet, "/v1/tenants/a%00b/lock", http.StatusBadRequest, "tenantId"},
		{"unlock with a bad tenant id", http.MethodPost, "/v1/tenants/" + strings.Repeat("a", 129) + "/unlock", http.StatusBadRequest, "tenantId"},
		{"retry with a bad plan id", http.MethodPost, "/v1/plans/not-a-ulid/retry", http.StatusBadRequest, "planId"},
		{"approve with a bad plan id", http.MethodPost, "/v1/plans/x:y/approve", http.StatusBadRequest, "planId"},
		{"reject with a bad plan id", http.MethodPost, "/v1/plans/not-a-ulid/reject", http.StatusBadRequest, "planId"},
		{"unknown plan", http.MethodGet, "/v1/plans/" + unknown, http.StatusNotFound, ""},
		{"unknown plan long poll", http.MethodGet, "/v1/plans/" + unknown + "?wait=1s", http.StatusNotFound, ""},
		{"unknown plan tasks", http.MethodGet, "/v1/plans/" + unknown + "/tasks", http.StatusNotFound, ""},
		{"unknown plan summary", http.MethodGet, "/v1/plans/" + unknown + "/summary", http.StatusNotFound, ""},
		{"summary with a bad plan id", http.MethodGet, "/v1/plans/not-a-ulid/summary", http.StatusBadRequest, "planId"},
		{"include something unknown", http.MethodGet, "/v1/plans/" + unknown + "?include=tasks", http.StatusBadRequest, "include"},
		{"plans including something unknown", http.MethodGet, "/v1/plans?include=everything", http.StatusBadRequest, "include"},
		{"unknown plan cancel", http.MethodPost, "/v1/plans/" + unknown + "/cancel", http.StatusNotFound, ""},
		{"unknown plan retry", http.MethodPost, "/v1/plans/" + unknown + "/retry", http.StatusNotFound, ""},
		{"unknown plan approve", http.MethodPost, "/v1/plans/" + unknown + "/approve", http.StatusNotFound, ""},
		{"unknown plan reject", http.MethodPost, "/v1/plans/" + unknown + "/reject", http.StatusNotFound, ""},
		{"unknown task", http.MethodGet, "/v1/tasks/" + unknown, http.StatusNotFound, ""},
		{"limit zero", http.MethodGet, "/v1/plans?limit=0", http.StatusBadRequest, "limit"},
		{"limit not a number", http.MethodGet, "/v1/plans?limit=ten", http.StatusBadRequest, "limit"},
		{"limit too high", http.MethodGet, "/v1/plans?limit=1001", http.StatusBadRequest, "limit"},
		{"unknown plan status", http.MethodGet, "/v1/plans?status=DONE", http.StatusBadRequest, "status"},
		{"cursor not a ULID", http.MethodGet, "/v1/plans?cursor=page2", http.StatusBadRequest, "cursor"},
		{"wait not a duration", http.MethodGet, "/v1/plans/" + unknown + "?wait=soon", http.StatusBadRequest, "wait"},
		{"wait too long", http.MethodGet, "/v1/plans/" + unknown + "?wait=1h", http.StatusBadRequest, "wait"},
		{"negative task offset", http.MethodGet, "/v1/plans/" + unknown + "/tasks?offset=-1", http.StatusBadRequest, "offset"},
		{"task limit too high", http.MethodGet, "/v1/plans/" + unknown + "/tasks?limit=5000", http.StatusBadRequest, "limit"},
		{"unknown task status", http.MethodGet, "/v1/plans/" + unknown + "/tasks?status=DONE", http.StatusBadRequest, "status"},
		{"unknown route", http.MethodGet, "/v1/nope", http.StatusNotFound, ""},
		{"unknown plan sub-resource", http.MethodGet, "/v1/plans/" + unknown + "/nope", http.StatusNotFound, ""},
		{"unknown path at the root", http.MethodGet, "/nope", http.StatusNotFound, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			requireProblem(t, do(t, tc.method, base+tc.path, nil), tc.status, tc.field)
		})
	}
}

func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	id := ulid.Make().String()
	tests := []struct {
		method string
		path   string
		allow  string
	}{
		{http.MethodDelete, "/v1/plans", "GET, POST"},
		{http.MethodPut, "/v1/plans/", "GET, POST"},
		{http.MethodDelete, "/v1/plans/" + id, "GET"},
		{http.MethodGet, "/v1/plans/" + id + "/pause", "POST"},
		{http.MethodPost, "/v1/plans/" + id + "/tasks", "GET"},
		{http.MethodGet, "/v1/tenants/t/retry", "POST"},
		{http.MethodPost, "/v1/tenants/t/task", "GET"},
		{http.MethodGet, "/v1/tenants/t/approve", "POST"},
		{http.MethodPost, "/v1/tenants/t/lock", "GET"},
		{http.MethodGet, "/v1/tenants/t/unlock", "POST"},
		{http.MethodGet, "/v1/plans/" + id + "/retry", "POST"},
		{http.MethodDelete, "/v1/plans/" + id + "/approve", "POST"},
		{http.MethodPatch, "/v1/tasks/" + id, "GET"},
		{http.MethodPost, "/healthz", "GET, HEAD"},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			t.Parallel()
			res := do(t, tc.method, base+tc.path, nil)
			p := requireProblem(t, res, http.StatusMethodNotAllowed, "")
			assert.Equal(t, wire.ProblemMethodNotAllowed, p.Type)
			assert.Equal(t, tc.allow, res.header.Get("Allow"))
		})
	}
}

func TestHealthAndRequestID(t *testing.T) {
	t.Parallel()
	base := servertest.With(t, server.Config{Name: "health-1"}).URL()

	health := decode[wire.Health](t, get(t, base+"/healthz"), http.StatusOK)
	assert.Equal(t, wire.Health{Status: "ok", Executor: "health-1"}, health)
	assert.JSONEq(t, `{"status":"ok","executor":"health-1"}`, string(get(t, base+"/healthz").body))
	assert.JSONEq(t, `{"status":"ok","executor":"health-1","redis":"disabled"}`, string(get(t, base+"/readyz").body))

	t.Run("request ids", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name string
			sent string
			keep bool
		}{
			{"none sent", "", false},
			{"well-formed kept", "trace-0123.abc_9", true},
			{"malformed replaced", "bad id; rm -rf", false},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				var headers []string
				if tc.sent != "" {
					headers = []string{api.RequestIDHeader, tc.sent}
				}
				for _, path := range []string{"/healthz", "/v1/nope", "/v1/plans/bad"} {
					got := do(t, http.MethodGet, base+path, nil, headers...).header.Get(api.RequestIDHeader)
					if tc.keep {
						assert.Equal(t, tc.sent, got)
						continue
					}
					_, err := ulid.ParseStrict(got)
					assert.NoError(t, err, "request id %q", got)
				}
			})
		}
	})
}

func TestRouterWithoutServer(t *testing.T) {
	t.Parallel()
	quiet := slog.New(slog.DiscardHandler)

	t.Run("readiness reported by the option", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name   string
			health wire.Health
			status int
		}{
			{"ok", wire.Health{Status: "ok", Redis: "ok"}, http.StatusOK},
			{"degraded: not ready, with the reason", wire.Health{Status: "degraded", Redis: "degraded",
				Reason: "redisrepo: save task: OOM command not allowed when used memory > 'maxmemory'."}, http.StatusServiceUnavailable},
			{"not ready", wire.Health{Status: "unavailable", Redis: "degraded"}, http.StatusServiceUnavailable},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				h := api.NewRouter(nil, api.Options{Logger: quiet, Readiness: func() wire.Health { return tc.health }})
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
				require.Equal(t, tc.status, rec.Code)
				var got wire.Health
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
				assert.Equal(t, tc.health, got)
			})
		}
	})

	t.Run("a panic becomes a 500 problem", func(t *testing.T) {
		t.Parallel()
		// With no service every use case panics (nil pointer): the handler must not crash the
		// server nor leak the panic.
		h := api.NewRouter(nil, api.Options{Logger: quiet})
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/plans", nil))
		require.Equal(t, http.StatusInternalServerError, rec.Code)
		assert.Equal(t, wire.ProblemContentType, rec.Header().Get("Content-Type"))
		var p wire.Problem
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
		assert.Equal(t, wire.ProblemInternal, p.Type)
		assert.Equal(t, http.StatusInternalServerError, p.Status)
		assert.NotContains(t, p.Detail, "nil pointer")
	})

	t.Run("a smaller body limit", func(t *testing.T) {
		t.Parallel()
		h := api.NewRouter(nil, api.Options{Logger: quiet, MaxBodyBytes: 16})
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/v1/plans", strings.NewReader(`{"name":"longer than sixteen bytes"}`))
		h.ServeHTTP(rec, req)
		require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
		assert.Equal(t, wire.ProblemContentType, rec.Header().Get("Content-Type"))
	})
}
