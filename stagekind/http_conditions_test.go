package stagekind

import (
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
)

// A deploy API that answers 202 {"state":"pending"} has not deployed: with a success
// condition the attempt is not a success until the condition holds (retried meanwhile), and a
// failure condition fails it at once whatever the status.
func TestHTTPConditionsJudgeTheResponse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		status   int
		header   string
		body     string
		success  string
		failure  string
		class    stage.Class // "" for success
		contains string
	}{
		{"pending is not ready", http.StatusAccepted, "", `{"state":"pending"}`, `status == 200 && body.state == "ready"`, "", stage.ClassRetryable, "success condition not met"},
		{"ready", http.StatusOK, "", `{"state":"ready","version":"v2"}`, `status == 200 && body.state == "ready"`, "", "", ""},
		{"failed fails at once", http.StatusOK, "", `{"state":"failed"}`, `body.state == "ready"`, `body.state == "failed"`, stage.ClassPermanent, "failure condition held"},
		{"a header", http.StatusOK, "done", ``, `headers["x-deploy"] == "done"`, "", "", ""},
		{"a text body", http.StatusOK, "", `deployed v2`, `body contains "deployed"`, "", "", ""},
		{"failure alone, the status decides", http.StatusServiceUnavailable, "", `{"state":"busy"}`, "", `body.state == "failed"`, stage.ClassRetryable, "503"},
		{"a body that is not an object does not hold", http.StatusOK, "", `[1,2]`, `body.state == "ready"`, "", stage.ClassRetryable, "success condition not met"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
				if tt.header != "" {
					w.Header().Set("X-Deploy", tt.header)
				}
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			})
			params := map[string]any{"url": srv.URL}
			if tt.success != "" {
				params["success"] = tt.success
			}
			if tt.failure != "" {
				params["failure"] = tt.failure
			}
			out, err := NewHTTP(HTTPOptions{}).Run(t.Context(), testRequest(params))
			if tt.class == "" {
				require.NoError(t, err)
				if tt.body != "" && tt.body[0] == '{' {
					assert.JSONEq(t, tt.body, string(out))
				}
				return
			}
			se := stage.AsError(err)
			assert.Equal(t, tt.class, se.Class)
			assert.Contains(t, se.Message, tt.contains)
		})
	}
}

func TestHTTPConditionsAreCheckedAtSubmission(t *testing.T) {
	t.Parallel()
	h := NewHTTP(HTTPOptions{})
	for _, param := range []string{"success", "failure"} {
		err := h.ValidateParams(map[string]any{"url": "https://deploy.example/", param: `status ==`})
		require.ErrorIs(t, err, ErrInvalidParams)
		var fe *stage.FieldError
		require.True(t, errors.As(err, &fe))
		assert.Equal(t, param, fe.Field)
	}
	require.NoError(t, h.ValidateParams(map[string]any{"url": "https://deploy.example/", "success": `status in [200, 201]`}))
	err := h.ValidateParams(map[string]any{"url": "https://deploy.example/", "success": `status + 1`})
	require.ErrorIs(t, err, ErrInvalidParams, "a condition is true or false")
}
