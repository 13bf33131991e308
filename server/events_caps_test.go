package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// openStream opens GET /v1/events on base and returns its response, its body left open until
// the test ends (or close is called).
func openStream(t *testing.T, base string) (*http.Response, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/events", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	closeIt := func() { cancel(); resp.Body.Close() }
	t.Cleanup(closeIt)
	return resp, closeIt
}

// Event streams are capped per executor and per client: beyond, 429 busy with Retry-After,
// naming the flag; a stream that closes frees its slot.
func TestEventStreamsAreCapped(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		total, perUser int
		flag           string
	}{
		{"per executor", 2, 10, "--max-event-streams"},
		{"per client", 10, 2, "--max-event-streams-per-client"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := servertest.With(t, server.Config{MaxEventStreams: tt.total, MaxEventStreamsPerClient: tt.perUser})
			first, closeFirst := openStream(t, srv.URL())
			require.Equal(t, http.StatusOK, first.StatusCode)
			second, _ := openStream(t, srv.URL())
			require.Equal(t, http.StatusOK, second.StatusCode)

			refused, _ := openStream(t, srv.URL())
			require.Equal(t, http.StatusTooManyRequests, refused.StatusCode)
			assert.Equal(t, "5", refused.Header.Get("Retry-After"))
			var p wire.Problem
			require.NoError(t, json.NewDecoder(refused.Body).Decode(&p))
			assert.Equal(t, wire.ProblemBusy, p.Type)
			assert.Contains(t, p.Detail, tt.flag)

			closeFirst()
			require.Eventually(t, func() bool {
				again, closeAgain := openStream(t, srv.URL())
				defer closeAgain()
				return again.StatusCode == http.StatusOK
			}, dgReady, 20*time.Millisecond, "a closed stream frees its slot")
		})
	}
}
