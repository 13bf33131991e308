package console_test

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/console"
)

func TestLoginPage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		status  int
		message string
	}{
		{name: "first sight", status: http.StatusUnauthorized},
		{name: "with a message", status: http.StatusUnauthorized, message: "Unknown token"},
		{name: "a message is escaped", status: http.StatusForbidden, message: `<script>alert(1)</script>`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			console.LoginPage(rec, tc.status, tc.message)
			require.Equal(t, tc.status, rec.Code)
			h := rec.Header()
			assert.Equal(t, "text/html; charset=utf-8", h.Get("Content-Type"))
			assert.Equal(t, "no-store", h.Get("Cache-Control"))
			assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
			body := rec.Body.String()

			// One form posting the field "token" to /login, as a password.
			assert.Contains(t, body, `action="/login"`)
			assert.Contains(t, body, `method="post"`)
			assert.Regexp(t, `<input[^>]+name="token"[^>]+type="password"`, body)
			assert.NotContains(t, body, "<script", "no script at all (a message is escaped): the CSP forbids inline ones")
			if tc.message != "" {
				assert.Contains(t, body, `data-testid="login-error"`)
				if !strings.ContainsAny(tc.message, "<>&") {
					assert.Contains(t, body, tc.message)
				}
			} else {
				assert.NotContains(t, body, `data-testid="login-error"`)
			}

			// The CSP is the console's, plus the hash of the page's one inline <style>: the
			// browser applies that style and nothing else inline.
			csp := h.Get("Content-Security-Policy")
			assert.Contains(t, csp, "default-src 'self'")
			assert.Contains(t, csp, "form-action 'self'")
			m := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindStringSubmatch(body)
			require.NotNil(t, m, "an inline style block")
			sum := sha256.Sum256([]byte(m[1]))
			assert.Contains(t, csp, "style-src 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
			assert.Equal(t, 1, strings.Count(body, "<style>"))
		})
	}
}
