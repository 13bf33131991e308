package openapitest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// validator returns a Validator that does not fail t: the test reads its mismatches.
func validator(t *testing.T) *Validator {
	t.Helper()
	r, err := loaded()
	require.NoError(t, err)
	return &Validator{router: r}
}

// The Validator finds each kind of answer the description does not allow, and lets through
// the answers it does (an event stream too, flushed as it is written).
func TestValidatorFindsWhatTheDescriptionDoesNotAllow(t *testing.T) {
	t.Parallel()
	const problem = "application/problem+json"
	tests := []struct {
		name, method, path string
		status             int
		contentType, body  string
		wrong              bool
	}{
		{"a declared answer", "GET", "/healthz", 200, "application/json", `{"status":"ok","executor":"e"}`, false},
		{"a declared problem", "GET", "/v1/plans/01ARZ3NDEKTSV4RRFFQ69G5FAV", 404, problem,
			`{"type":"urn:executor:problem:not-found","title":"Not Found","status":404,"detail":"no plan"}`, false},
		{"an undeclared status", "POST", "/v1/plans/01ARZ3NDEKTSV4RRFFQ69G5FAV/pause", 418, problem,
			`{"type":"urn:executor:problem:not-found","title":"teapot","status":418}`, true},
		{"a body breaking its schema", "GET", "/v1/plans/01ARZ3NDEKTSV4RRFFQ69G5FAV", 200, "application/json", `{"planId":7}`, true},
		{"a problem of an unknown type", "GET", "/v1/plans/01ARZ3NDEKTSV4RRFFQ69G5FAV", 404, problem,
			`{"type":"urn:executor:problem:gone-fishing","title":"x","status":404}`, true},
		{"an undeclared content type", "GET", "/v1/plans/01ARZ3NDEKTSV4RRFFQ69G5FAV", 404, "text/plain", "nope", true},
		{"a route the description lacks", "GET", "/v1/teleport", 200, "application/json", `{}`, true},
		{"a route the API does not serve, answered 404", "GET", "/v1/teleport", 404, problem,
			`{"type":"urn:executor:problem:not-found","title":"Not Found","status":404}`, false},
		{"a path that is no route, 401 without a token", "GET", "/wp-admin", 401, problem,
			`{"type":"urn:executor:problem:unauthorized","title":"Unauthorized","status":401}`, false},
		{"an escaped letter is no route the API serves", "GET", "/%68ealthz", 200, "application/json", `{"status":"ok","executor":"e"}`, true},
		{"a sub-router's root with its slash", "GET", "/v1/plans/", 200, "application/json", `{"plans":[]}`, false},
		{"an event stream", "GET", "/v1/events", 200, "text/event-stream", "id: 1\nevent: plan\ndata: {}\n\n", false},
		{"an escaped slash in a tenant id, refused", "GET", "/v1/tenants/a%2Fb/checkpoint", 400, problem,
			`{"type":"urn:executor:problem:invalid-input","title":"Bad Request","status":400,"field":"tenantId"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := validator(t)
			h := v.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", tt.contentType)
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
				_ = http.NewResponseController(w).Flush()
			}))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, strings.NewReader("")))
			assert.Equal(t, tt.status, rec.Code, "the answer passes through")
			assert.Equal(t, tt.body, rec.Body.String())
			assert.Equal(t, 1, v.Checked())
			if tt.wrong {
				assert.Len(t, v.Mismatches(), 1)
			} else {
				assert.Empty(t, v.Mismatches())
			}
			if tt.contentType == "text/event-stream" {
				assert.True(t, rec.Flushed, "an event stream is flushed through the validator")
			}
		})
	}
}
