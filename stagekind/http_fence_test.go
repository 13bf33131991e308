package stagekind

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every attempt carries Executor-Fence: <tenantId>:<epoch>, the Request's tenant and fence
// epoch, whatever its params, so a target can refuse a stale caller.
func TestHTTPSendsTheFenceTokenOnEveryAttempt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		tenant  string
		fence   uint64
		attempt int
		status  int
		want    string
	}{
		{name: "first attempt", tenant: "tenant-001", fence: 7, attempt: 1, status: http.StatusOK, want: "tenant-001:7"},
		{name: "a retried attempt", tenant: "tenant-001", fence: 7, attempt: 3, status: http.StatusServiceUnavailable, want: "tenant-001:7"},
		{name: "another tenant and epoch", tenant: "eu.shop_9", fence: 1234567890123, attempt: 1, status: http.StatusOK, want: "eu.shop_9:1234567890123"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, got := newServer(t, respondWith(tt.status, ""))
			req := testRequest(map[string]any{"url": srv.URL, "method": "POST", "body": "{}",
				"headers": map[string]any{"X-Fence": "not this one"}})
			req.TenantID, req.Fence, req.Attempt = tt.tenant, tt.fence, tt.attempt
			_, _ = NewHTTP(HTTPOptions{}).Run(context.Background(), req)
			r := <-got
			assert.Equal(t, tt.want, r.header.Get(FenceHeader))
			assert.Equal(t, []string{tt.want}, r.header.Values("Executor-Fence"), "one value, the documented name")
			assert.Equal(t, req.FenceToken(), r.header.Get("Executor-Fence"))
		})
	}
}

// The retry of an in-doubt attempt (KeyRun set) sends that attempt's run's key.
func TestHTTPSendsTheInDoubtRunsIdempotencyKey(t *testing.T) {
	t.Parallel()
	srv, got := newServer(t, respondWith(http.StatusOK, ""))
	req := testRequest(map[string]any{"url": srv.URL})
	req.Run, req.KeyRun = 3, 1
	_, err := NewHTTP(HTTPOptions{}).Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "01PLAN/01TASK/push-config/1", (<-got).header.Get("Idempotency-Key"))
}

// A plan cannot set Executor-Fence, in any case: the executor sets it.
func TestHTTPRefusesAFenceHeaderParam(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		header string
	}{
		{name: "canonical", header: "Executor-Fence"},
		{name: "lower case", header: "executor-fence"},
		{name: "upper case", header: "EXECUTOR-FENCE"},
	}
	h := NewHTTP(HTTPOptions{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			params := map[string]any{"url": "https://cfg.example.com/x", "headers": map[string]any{tt.header: "t:999"}}
			err := h.ValidateParams(params)
			requireParamError(t, err, "headers."+tt.header)
			assert.Contains(t, err.Error(), "set by the executor")

			_, err = h.Run(context.Background(), testRequest(params))
			require.ErrorIs(t, err, ErrInvalidParams, "Run refuses it too, sending nothing")
		})
	}
}
