package api_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/api"
	"github.com/executor-dev/executor/api/openapitest"
	"github.com/executor-dev/executor/auth"
	"github.com/executor-dev/executor/console"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// The tokens of the auth tests: long enough for auth.ParseToken, and recognisable in logs.
const (
	readToken    = "read-token-0123456789abcdef"
	operateToken = "operate-token-0123456789abcdef"
	wrongToken   = "wrong-token-0123456789abcdef"
)

// publicSet is every route that answers without a token, as "METHOD /path" (chi's pattern).
// Adding a route makes TestAuthEveryRoute decide whether it is public: it must be listed here
// (and in api/auth.go) to be.
var publicSet = []string{"GET /healthz", "HEAD /healthz", "GET /readyz", "HEAD /readyz", "POST /login"}

// readMayChange are the routes of a method other than GET and HEAD that a read token may use:
// logging out changes nothing on the server.
var readMayChange = []string{"POST /logout"}

// testKeys holds a read and an operate token.
func testKeys() *auth.Keys {
	return auth.NewKeys([]auth.Token{{Role: auth.RoleRead, Secret: readToken}, {Role: auth.RoleOperate, Secret: operateToken}})
}

// roleEcho stands in for the metrics handler: it answers the role the request was
// authenticated with, from the request context.
var roleEcho = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	role, _ := auth.RoleFrom(r.Context())
	_, _ = w.Write([]byte("role=" + string(role)))
})

// fullRouter is the API with every option set (console, metrics, auth with keys, a debug
// logger writing to logs) over a real executor on the in-memory store.
func fullRouter(t *testing.T, keys *auth.Keys) (http.Handler, *servertest.Buffer) {
	t.Helper()
	exe, err := server.NewExecutor(server.Config{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	require.NoError(t, exe.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		assert.NoError(t, exe.Stop(ctx))
	})
	logs := &servertest.Buffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return api.NewRouter(exe.Service(), api.Options{Logger: logger, Console: console.Handler(), Metrics: roleEcho, Auth: keys}), logs
}

// route is one registered route as chi.Walk reports it.
type route struct{ method, pattern string }

func (r route) String() string { return r.method + " " + r.pattern }

// routeTable walks the router: every route it registers, sorted.
func routeTable(t *testing.T, h http.Handler) []route {
	t.Helper()
	routes, ok := h.(chi.Routes)
	require.True(t, ok, "api.NewRouter must return its chi router (%T) so that its routes can be walked", h)
	var out []route
	require.NoError(t, chi.Walk(routes, func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		out = append(out, route{method, pattern})
		return nil
	}))
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// target fills a route pattern's parameters with well-formed values.
func target(pattern string) string {
	id := ulid.Make().String()
	return strings.NewReplacer("{planId}", id, "{taskId}", id, "{tenantId}", "tenant-1", "*", "app.js").Replace(pattern)
}

// serve sends one request to h (headers are name, value pairs) and returns the answer. The
// request ends after a short while, so that the event stream returns too.
func serve(t *testing.T, h http.Handler, method, target string, headers ...string) response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, method, target, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}

func bearer(token string) []string { return []string{"Authorization", "Bearer " + token} }

// isConsolePage tells the console's routes, which answer a browser without a token with the
// login page rather than a problem.
func isConsolePage(r route) bool { return r.pattern == "/" || strings.HasPrefix(r.pattern, "/assets/") }

// requireUnauthorized requires a 401 with the Bearer challenge: a problem, or for a console
// page the login form.
func requireUnauthorized(t *testing.T, res response, page bool) {
	t.Helper()
	require.Equal(t, http.StatusUnauthorized, res.status, "body: %s", res.body)
	assert.True(t, strings.HasPrefix(res.header.Get("WWW-Authenticate"), `Bearer realm="executor"`),
		"WWW-Authenticate: %q", res.header.Get("WWW-Authenticate"))
	assert.Empty(t, res.header.Get(api.RoleHeader))
	if page {
		assert.Equal(t, "text/html; charset=utf-8", res.header.Get("Content-Type"))
		assert.Contains(t, string(res.body), `action="/login"`)
		return
	}
	p := requireProblem(t, res, http.StatusUnauthorized, "")
	assert.Equal(t, wire.ProblemUnauthorized, p.Type)
}

func requireForbidden(t *testing.T, res response) {
	t.Helper()
	p := requireProblem(t, res, http.StatusForbidden, "")
	assert.Equal(t, wire.ProblemForbidden, p.Type)
}

// Every route the router registers, enumerated from the router itself: without a token or
// with an unknown one it is a 401; a read token may use it only if it does not change
// anything (403 otherwise); an operate token passes everywhere. The public routes are exactly
// the probes and the login form.
func TestAuthEveryRoute(t *testing.T) {
	t.Parallel()
	router, logs := fullRouter(t, testKeys())
	routes := routeTable(t, router)
	require.NotEmpty(t, routes)
	h := openapitest.New(t).Wrap(router) // every answer below, 401s and 403s too, as documented

	// A route is public when a token changes nothing about being let in: it answers without
	// one, or (POST /login) refuses even an operate bearer token itself.
	var public []string
	for _, r := range routes {
		path := target(r.pattern)
		if serve(t, h, r.method, path).status != http.StatusUnauthorized ||
			serve(t, h, r.method, path, bearer(operateToken)...).status == http.StatusUnauthorized {
			public = append(public, r.String())
		}
	}
	assert.ElementsMatch(t, publicSet, public, "the routes that answer without a token")

	t.Run("routes", func(t *testing.T) {
		for _, r := range routes {
			if contains(publicSet, r.String()) {
				continue
			}
			t.Run(r.String(), func(t *testing.T) {
				t.Parallel()
				path := target(r.pattern)
				requireUnauthorized(t, serve(t, h, r.method, path), isConsolePage(r))
				requireUnauthorized(t, serve(t, h, r.method, path, bearer(wrongToken)...), isConsolePage(r))
				requireUnauthorized(t, serve(t, h, r.method, path, "Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("u:"+operateToken))), isConsolePage(r))

				read := serve(t, h, r.method, path, bearer(readToken)...)
				if r.method == http.MethodGet || r.method == http.MethodHead || contains(readMayChange, r.String()) {
					assert.NotContains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, read.status, "read token: %s", read.body)
					assert.Equal(t, string(auth.RoleRead), read.header.Get(api.RoleHeader), "read token: %s", read.body)
				} else {
					requireForbidden(t, read)
				}
				operate := serve(t, h, r.method, path, bearer(operateToken)...)
				assert.NotContains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, operate.status, "operate token: %s", operate.body)
				assert.Equal(t, string(auth.RoleOperate), operate.header.Get(api.RoleHeader))
			})
		}
	})

	t.Run("paths that are no route", func(t *testing.T) {
		tests := []struct {
			name, method, path string
		}{
			{"unknown path", http.MethodGet, "/v1/nope"},
			{"unknown path at the root", http.MethodGet, "/wp-admin"},
			{"wrong method on a known route", http.MethodDelete, "/v1/plans"},
			{"an escaped probe path", http.MethodGet, "/%68ealthz"},
			{"a probe path with a trailing slash", http.MethodGet, "/healthz/"},
			{"login with GET", http.MethodGet, "/login"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				requireUnauthorized(t, serve(t, h, tc.method, tc.path), false)
			})
		}
	})

	t.Run("probes", func(t *testing.T) {
		t.Parallel()
		assert.Equal(t, http.StatusOK, serve(t, h, http.MethodGet, "/healthz").status)
		assert.Equal(t, http.StatusOK, serve(t, h, http.MethodGet, "/readyz").status)
		assert.NotEqual(t, http.StatusUnauthorized, serve(t, h, http.MethodHead, "/healthz").status)
	})

	t.Run("the role is in the request context", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct{ token, role string }{{readToken, "read"}, {operateToken, "operate"}} {
			res := serve(t, h, http.MethodGet, "/metrics", bearer(tc.token)...)
			require.Equal(t, http.StatusOK, res.status)
			assert.Equal(t, "role="+tc.role, string(res.body))
		}
	})

	t.Run("no token in the logs", func(t *testing.T) {
		t.Parallel()
		serve(t, h, http.MethodPost, "/v1/plans", bearer(readToken)...)
		serve(t, h, http.MethodGet, "/v1/plans", bearer(wrongToken)...)
		serve(t, h, http.MethodGet, "/", "Cookie", api.TokenCookie+"="+base64.RawURLEncoding.EncodeToString([]byte(wrongToken)))
		login(t, h, operateToken)
		login(t, h, wrongToken)
	})

	// After every subtest above: the refusals were logged, never with a token.
	t.Cleanup(func() {
		out := logs.String()
		assert.Contains(t, out, "forbidden", "a refused read token is logged")
		for _, secret := range []string{readToken, operateToken, wrongToken} {
			assert.NotContains(t, out, secret)
			assert.NotContains(t, out, base64.RawURLEncoding.EncodeToString([]byte(secret)))
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// login posts token to POST /login as the console's form does.
func login(t *testing.T, h http.Handler, token string, headers ...string) response {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}

// tokenCookie returns the console cookie a response sets.
func tokenCookie(t *testing.T, res response) *http.Cookie {
	t.Helper()
	for _, c := range (&http.Response{Header: res.header}).Cookies() {
		if c.Name == api.TokenCookie {
			return c
		}
	}
	require.FailNow(t, "no "+api.TokenCookie+" cookie", "Set-Cookie: %q", res.header.Values("Set-Cookie"))
	return nil
}

func TestLogin(t *testing.T) {
	t.Parallel()
	h, _ := fullRouter(t, testKeys())

	t.Run("a valid token becomes the cookie", func(t *testing.T) {
		t.Parallel()
		for _, token := range []string{readToken, operateToken} {
			res := login(t, h, token)
			require.Equal(t, http.StatusSeeOther, res.status, "body: %s", res.body)
			assert.Equal(t, "/", res.header.Get("Location"))
			c := tokenCookie(t, res)
			assert.True(t, c.HttpOnly, "HttpOnly")
			assert.Equal(t, http.SameSiteStrictMode, c.SameSite)
			assert.Equal(t, "/", c.Path)
			assert.False(t, c.Secure, "not Secure over plain HTTP")
			assert.Zero(t, c.MaxAge, "a session cookie")
			assert.NotContains(t, res.header.Get("Set-Cookie"), token, "the token is not echoed as it is")
		}
	})

	t.Run("over TLS the cookie is Secure", func(t *testing.T) {
		t.Parallel()
		req := httptest.NewRequest(http.MethodPost, "https://executor.example/login", strings.NewReader("token="+operateToken))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, http.StatusSeeOther, rec.Code)
		res := response{status: rec.Code, header: rec.Header()}
		assert.True(t, tokenCookie(t, res).Secure)
	})

	t.Run("refused", func(t *testing.T) {
		tests := []struct {
			name    string
			token   string
			headers []string
			status  int
		}{
			{name: "unknown token", token: wrongToken, status: http.StatusUnauthorized},
			{name: "empty token", token: "", status: http.StatusUnauthorized},
			{name: "a token's prefix", token: operateToken[:20], status: http.StatusUnauthorized},
			{name: "posted by another site", token: operateToken, headers: []string{"Sec-Fetch-Site", "cross-site"}, status: http.StatusForbidden},
			{name: "posted by another origin", token: operateToken, headers: []string{"Origin", "https://evil.example"}, status: http.StatusForbidden},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				res := login(t, h, tc.token, tc.headers...)
				require.Equal(t, tc.status, res.status)
				assert.Equal(t, "text/html; charset=utf-8", res.header.Get("Content-Type"))
				assert.Contains(t, string(res.body), `data-testid="login-error"`)
				assert.Empty(t, res.header.Values("Set-Cookie"))
				if tc.token != "" {
					assert.NotContains(t, string(res.body), tc.token, "the token is not echoed")
				}
			})
		}
	})

	t.Run("logout clears the cookie", func(t *testing.T) {
		t.Parallel()
		res := serve(t, h, http.MethodPost, "/logout", bearer(readToken)...)
		require.Equal(t, http.StatusSeeOther, res.status)
		assert.Equal(t, "/", res.header.Get("Location"))
		c := tokenCookie(t, res)
		assert.Empty(t, c.Value)
		assert.Negative(t, c.MaxAge)
		requireUnauthorized(t, serve(t, h, http.MethodPost, "/logout"), false)
	})
}

// The console's cookie is a token source like Authorization, but a change made with it needs
// the console's header (CSRF).
func TestCookieAuth(t *testing.T) {
	t.Parallel()
	h, _ := fullRouter(t, testKeys())
	cookieOf := func(token string) []string {
		c := tokenCookie(t, login(t, h, token))
		return []string{"Cookie", c.Name + "=" + c.Value}
	}
	readCookie, operateCookie := cookieOf(readToken), cookieOf(operateToken)
	pause := "/v1/plans/" + ulid.Make().String() + "/pause"

	tests := []struct {
		name    string
		method  string
		path    string
		headers []string
		status  int // 0: neither 401 nor 403
		page    bool
	}{
		{name: "the console with the cookie", method: http.MethodGet, path: "/", headers: readCookie, status: http.StatusOK},
		{name: "an asset with the cookie", method: http.MethodGet, path: "/assets/app.js", headers: readCookie, status: http.StatusOK},
		{name: "the console without it: the login page", method: http.MethodGet, path: "/", status: http.StatusUnauthorized, page: true},
		{name: "a read with the cookie", method: http.MethodGet, path: "/v1/plans", headers: readCookie, status: http.StatusOK},
		{name: "a change without the console header", method: http.MethodPost, path: pause, headers: operateCookie, status: http.StatusForbidden},
		{name: "a change with a wrong console header", method: http.MethodPost, path: pause, headers: append([]string{api.ConsoleHeader, "yes"}, operateCookie...), status: http.StatusForbidden},
		{name: "a change with the console header", method: http.MethodPost, path: pause, headers: append([]string{api.ConsoleHeader, "1"}, operateCookie...)},
		{name: "a change with a read cookie", method: http.MethodPost, path: pause, headers: append([]string{api.ConsoleHeader, "1"}, readCookie...), status: http.StatusForbidden},
		{name: "a bearer token needs no console header", method: http.MethodPost, path: pause, headers: bearer(operateToken)},
		{name: "a bad bearer token is not rescued by the cookie", method: http.MethodGet, path: "/v1/plans", headers: append(bearer(wrongToken), operateCookie...), status: http.StatusUnauthorized},
		{name: "a revoked cookie on the console: the login page", method: http.MethodGet, path: "/", headers: []string{"Cookie", api.TokenCookie + "=" + base64.RawURLEncoding.EncodeToString([]byte(wrongToken))}, status: http.StatusUnauthorized, page: true},
		{name: "a cookie that is not base64", method: http.MethodGet, path: "/v1/plans", headers: []string{"Cookie", api.TokenCookie + "=%%%"}, status: http.StatusUnauthorized},
		{name: "logout with the cookie and the console header", method: http.MethodPost, path: "/logout", headers: append([]string{api.ConsoleHeader, "1"}, readCookie...), status: http.StatusSeeOther},
		{name: "logout with the cookie but no console header", method: http.MethodPost, path: "/logout", headers: readCookie, status: http.StatusForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := serve(t, h, tc.method, tc.path, tc.headers...)
			switch tc.status {
			case 0:
				assert.NotContains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, res.status, "body: %s", res.body)
			case http.StatusUnauthorized:
				requireUnauthorized(t, res, tc.page)
			case http.StatusForbidden:
				requireForbidden(t, res)
			default:
				require.Equal(t, tc.status, res.status, "body: %s", res.body)
			}
		})
	}
}

// Without tokens the API is open, as before auth existed, and serves no login routes.
func TestAuthDisabled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		keys *auth.Keys
	}{{"nil keys", nil}, {"no tokens", auth.NewKeys(nil)}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, _ := fullRouter(t, tc.keys)
			res := serve(t, h, http.MethodGet, "/v1/plans")
			var list wire.PlanList
			require.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
			require.NoError(t, json.Unmarshal(res.body, &list))
			assert.Empty(t, res.header.Get(api.RoleHeader))
			assert.Equal(t, http.StatusOK, serve(t, h, http.MethodGet, "/").status)
			assert.Equal(t, "role=", string(serve(t, h, http.MethodGet, "/metrics").body), "no role in the context")
			p := requireProblem(t, serve(t, h, http.MethodPost, "/v1/plans/"+ulid.Make().String()+"/pause"), http.StatusNotFound, "")
			assert.Equal(t, wire.ProblemNotFound, p.Type)
			for _, path := range []string{"/login", "/logout"} {
				p := requireProblem(t, serve(t, h, http.MethodPost, path), http.StatusNotFound, "")
				assert.Equal(t, wire.ProblemNotFound, p.Type, path)
			}
		})
	}
}
