package api_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/api"
	"github.com/executor-dev/executor/wire"
)

// Load balancers and kubelets may probe with HEAD: /healthz and /readyz answer it as they
// answer GET (status, Content-Type), without a body.
func TestProbesAnswerHEADLikeGET(t *testing.T) {
	t.Parallel()
	ready := api.NewRouter(nil, api.Options{Name: "probe-ok"})
	notReady := api.NewRouter(nil, api.Options{Name: "probe-down", Readiness: func() wire.Health {
		return wire.Health{Status: "unavailable", Redis: "unavailable", Reason: "redis not reached yet since start"}
	}})
	tests := []struct {
		name   string
		router http.Handler
		path   string
		status int
	}{
		{"healthz", ready, "/healthz", http.StatusOK},
		{"readyz ready", ready, "/readyz", http.StatusOK},
		{"readyz not ready", notReady, "/readyz", http.StatusServiceUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tc.router)
			t.Cleanup(srv.Close)
			got := do(t, http.MethodGet, srv.URL+tc.path, nil)
			require.Equal(t, tc.status, got.status, "GET: %s", got.body)
			require.NotEmpty(t, got.body, "precondition: GET has a body")
			head := do(t, http.MethodHead, srv.URL+tc.path, nil)
			assert.Equal(t, tc.status, head.status)
			assert.Equal(t, got.header.Get("Content-Type"), head.header.Get("Content-Type"))
			assert.Empty(t, head.body)
		})
	}
}
