package console_test

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/console"
)

func serve(t *testing.T, h http.Handler, target string, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestIndex(t *testing.T) {
	t.Parallel()
	h := console.Handler()
	rec := serve(t, h, "/")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "text/html; charset=utf-8", rec.Header().Get("Content-Type"))
	assert.Equal(t, "no-cache", rec.Header().Get("Cache-Control"))
	assert.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
	assert.Contains(t, rec.Header().Get("Content-Security-Policy"), "default-src 'self'")

	body := rec.Body.String()
	refs := regexp.MustCompile(`(?i)\b(?:src|href)\s*=\s*"([^"]*)"`).FindAllStringSubmatch(body, -1)
	var assets []string
	for _, m := range refs {
		ref := m[1]
		switch {
		case strings.HasPrefix(ref, "/assets/"):
			assets = append(assets, ref)
		case strings.HasPrefix(ref, "#"), ref == "data:,":
			// in-page routes; the empty favicon (no request for /favicon.ico)
		default:
			t.Errorf("index.html references %q: only /assets/... may be loaded", ref)
		}
	}
	assert.ElementsMatch(t, []string{"/assets/style.css", "/assets/app.js", "/assets/plan.js"}, assets)
	for _, a := range assets {
		assert.Equal(t, http.StatusOK, serve(t, h, a).Code, a)
	}

	// The ETag makes revalidation cheap.
	etag := rec.Header().Get("ETag")
	require.NotEmpty(t, etag)
	assert.Equal(t, http.StatusNotModified, serve(t, h, "/", "If-None-Match", etag).Code)
}

func TestAssetsContentType(t *testing.T) {
	t.Parallel()
	h := console.Handler()
	tests := []struct {
		path, contentType, contains string
	}{
		{"/assets/app.js", "text/javascript; charset=utf-8", "new EventSource("},
		{"/assets/plan.js", "text/javascript; charset=utf-8", "/summary"},
		{"/assets/style.css", "text/css; charset=utf-8", "data-state=\"done\""},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			rec := serve(t, h, tc.path)
			require.Equal(t, http.StatusOK, rec.Code)
			assert.Equal(t, tc.contentType, rec.Header().Get("Content-Type"))
			assert.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
			assert.Equal(t, "no-cache", rec.Header().Get("Cache-Control"))
			assert.Contains(t, rec.Body.String(), tc.contains)
		})
	}

	t.Run("every embedded asset is served with a type", func(t *testing.T) {
		t.Parallel()
		names, err := fs.Glob(console.FS(), "assets/*")
		require.NoError(t, err)
		require.NotEmpty(t, names)
		for _, name := range names {
			rec := serve(t, h, "/"+name)
			require.Equal(t, http.StatusOK, rec.Code, name)
			assert.NotEqual(t, "application/octet-stream", rec.Header().Get("Content-Type"), name)
		}
	})
}

// TestWorksOffline: no embedded file points at another host, so the console needs nothing
// but the executor that serves it.
func TestWorksOffline(t *testing.T) {
	t.Parallel()
	external := regexp.MustCompile(`(?i)(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}|https?://`)
	n := 0
	err := fs.WalkDir(console.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		b, err := fs.ReadFile(console.FS(), name)
		if err != nil {
			return err
		}
		body := string(b)
		assert.Empty(t, external.FindAllString(body, -1), "%s names another host", name)
		if strings.HasSuffix(name, ".css") {
			assert.NotContains(t, body, "@import", name)
			assert.NotContains(t, body, "url(", name)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 5, n, "index.html, login.html, app.js, plan.js and style.css")
}

func TestNotFound(t *testing.T) {
	t.Parallel()
	h := console.Handler()
	for _, path := range []string{"/assets/nope.js", "/assets/", "/index.html", "/login.html", "/static/index.html", "/v1/plans"} {
		assert.Equal(t, http.StatusNotFound, serve(t, h, path).Code, path)
	}
}
