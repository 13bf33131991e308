package stagekind

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
)

// 501 Not Implemented says the target does not implement the request: retrying cannot help.
// Every other 5xx stays retryable.
func TestHTTP501IsPermanentOtherServerErrorsAreRetryable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code int
		want stage.Class
	}{
		{http.StatusNotImplemented, stage.ClassPermanent},
		{http.StatusInternalServerError, stage.ClassRetryable},
		{http.StatusBadGateway, stage.ClassRetryable},
		{http.StatusHTTPVersionNotSupported, stage.ClassRetryable},
		{http.StatusNetworkAuthenticationRequired, stage.ClassRetryable},
		{599, stage.ClassRetryable},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.code), func(t *testing.T) {
			t.Parallel()
			srv, _ := newServer(t, respondWith(tt.code, "no", "Retry-After", "5"))
			_, err := runHTTP(t, map[string]any{"url": srv.URL})
			requireStageError(t, err, tt.want, tt.code)
		})
	}
}

// Every attempt of one stage within one run carries the same Idempotency-Key, so a target
// can recognise a retried request; a new run carries a new one.
func TestHTTPIdempotencyKeyIsOnePerStagePerRun(t *testing.T) {
	t.Parallel()
	srv, got := newServer(t, respondWith(http.StatusOK, ""))
	h := NewHTTP(HTTPOptions{})
	keyOf := func(run, attempt int) string {
		t.Helper()
		req := testRequest(map[string]any{"url": srv.URL})
		req.Run, req.Attempt = run, attempt
		_, err := h.Run(context.Background(), req)
		require.NoError(t, err)
		return (<-got).header.Get("Idempotency-Key")
	}
	first, second, again := keyOf(1, 1), keyOf(1, 2), keyOf(2, 1)
	assert.Equal(t, "01PLAN/01TASK/push-config/1", first)
	assert.Equal(t, first, second, "a retried attempt of the same run")
	assert.Equal(t, "01PLAN/01TASK/push-config/2", again, "a new run")
}
