package api_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/api"
	"github.com/executor-dev/executor/console"
	"github.com/executor-dev/executor/wire"
)

func TestConsoleMount(t *testing.T) {
	t.Parallel()
	quiet := slog.New(slog.DiscardHandler)
	serve := func(h http.Handler, method, target string) response {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
		return response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
	}

	t.Run("with a console", func(t *testing.T) {
		t.Parallel()
		stub := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "console "+r.URL.Path)
		})
		h := api.NewRouter(nil, api.Options{Logger: quiet, Console: stub})

		res := serve(h, http.MethodGet, "/")
		require.Equal(t, http.StatusOK, res.status)
		assert.Equal(t, "console /", string(res.body))
		res = serve(h, http.MethodGet, "/assets/app.js")
		require.Equal(t, http.StatusOK, res.status)
		assert.Equal(t, "console /assets/app.js", string(res.body))

		// The API is untouched.
		assert.Equal(t, http.StatusOK, serve(h, http.MethodGet, "/healthz").status)
		requireProblem(t, serve(h, http.MethodGet, "/v1/plans/not-a-ulid"), http.StatusBadRequest, "planId")
		requireProblem(t, serve(h, http.MethodGet, "/v1/nope"), http.StatusNotFound, "")
		requireProblem(t, serve(h, http.MethodGet, "/nope"), http.StatusNotFound, "")
		res = serve(h, http.MethodPost, "/")
		requireProblem(t, res, http.StatusMethodNotAllowed, "")
		assert.Equal(t, "GET", res.header.Get("Allow"))
	})

	t.Run("without a console", func(t *testing.T) {
		t.Parallel()
		h := api.NewRouter(nil, api.Options{Logger: quiet})
		for _, path := range []string{"/", "/assets/app.js"} {
			p := requireProblem(t, serve(h, http.MethodGet, path), http.StatusNotFound, "")
			assert.Equal(t, wire.ProblemNotFound, p.Type)
		}
	})

	t.Run("the executor serves the console and the API", func(t *testing.T) {
		t.Parallel()
		base := startServer(t)
		res := get(t, base+"/")
		require.Equal(t, http.StatusOK, res.status)
		assert.Equal(t, "text/html; charset=utf-8", res.header.Get("Content-Type"))
		assert.NotEmpty(t, res.header.Get("X-Request-Id"))
		assert.Contains(t, string(res.body), `src="/assets/app.js"`)
		res = get(t, base+"/assets/app.js")
		require.Equal(t, http.StatusOK, res.status)
		assert.True(t, strings.HasPrefix(res.header.Get("Content-Type"), "text/javascript"))
		decode[wire.PlanList](t, get(t, base+"/v1/plans"), http.StatusOK)

		// An unknown asset is the API's 404 problem, like any unknown path.
		res = get(t, base+"/assets/nope.js")
		assert.Equal(t, http.StatusNotFound, res.status)
		assert.Equal(t, wire.ProblemContentType, res.header.Get("Content-Type"))
		_ = console.Handler // the wiring is server.New's: console.Handler()
	})
}
