package stagekind

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
)

// received is what a test server saw of one request.
type received struct {
	method string
	path   string
	query  string
	header http.Header
	body   string
}

// newServer starts a server that records each request into got and answers with respond.
func newServer(t *testing.T, respond http.HandlerFunc) (*httptest.Server, <-chan received) {
	t.Helper()
	got := make(chan received, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- received{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, header: r.Header.Clone(), body: string(body)}
		respond(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// respondWith answers every request with status, headers and body.
func respondWith(status int, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func testRequest(params map[string]any) stage.Request {
	return stage.Request{
		PlanID: "01PLAN", TaskID: "01TASK", TenantID: "tenant-001", Stage: "push-config",
		Run: 2, Attempt: 3, Params: params,
	}
}

// runHTTP runs the http kind with default options against params.
func runHTTP(t *testing.T, params map[string]any) (json.RawMessage, error) {
	t.Helper()
	return NewHTTP(HTTPOptions{}).Run(context.Background(), testRequest(params))
}

// requireStageError checks err's class and code and returns the *stage.Error.
func requireStageError(t *testing.T, err error, class stage.Class, code int) *stage.Error {
	t.Helper()
	require.Error(t, err)
	var se *stage.Error
	require.True(t, errors.As(err, &se), "want a *stage.Error, got %T: %v", err, err)
	assert.Equal(t, class, se.Class)
	assert.Equal(t, code, se.Code)
	return se
}

func TestHTTPRequestArrivesAsGiven(t *testing.T) {
	t.Parallel()
	srv, got := newServer(t, respondWith(http.StatusOK, `{"host":"a.internal"}`))
	req := testRequest(map[string]any{
		"method":  "POST",
		"url":     srv.URL + "/tenants/tenant-001?dry=1",
		"headers": map[string]any{"X-Tenant": "tenant-001", "authorization": "Bearer t"},
		"body":    `{"version":"1.2.3"}`,
	})

	out, err := NewHTTP(HTTPOptions{}).Run(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, `{"host":"a.internal"}`, string(out))

	r := <-got
	assert.Equal(t, http.MethodPost, r.method)
	assert.Equal(t, "/tenants/tenant-001", r.path)
	assert.Equal(t, "dry=1", r.query)
	assert.Equal(t, `{"version":"1.2.3"}`, r.body)
	assert.Equal(t, "tenant-001", r.header.Get("X-Tenant"))
	assert.Equal(t, "Bearer t", r.header.Get("Authorization"))
	assert.Equal(t, "application/json", r.header.Get("Content-Type"))
	assert.Equal(t, UserAgent, r.header.Get("User-Agent"))
	assert.Equal(t, req.IdempotencyKey(), r.header.Get("Idempotency-Key"))
}

func TestHTTPDefaults(t *testing.T) {
	t.Parallel()
	srv, got := newServer(t, respondWith(http.StatusNoContent, ""))
	out, err := runHTTP(t, map[string]any{"url": srv.URL})
	require.NoError(t, err)
	assert.Nil(t, out)

	r := <-got
	assert.Equal(t, http.MethodGet, r.method)
	assert.Empty(t, r.body)
	assert.Empty(t, r.header.Get("Content-Type"))
	assert.Equal(t, testRequest(nil).IdempotencyKey(), r.header.Get("Idempotency-Key"))
}

func TestHTTPHeaderOverrides(t *testing.T) {
	t.Parallel()
	srv, got := newServer(t, respondWith(http.StatusOK, ""))
	_, err := runHTTP(t, map[string]any{
		"method":  "PUT",
		"url":     srv.URL,
		"body":    "a=b",
		"headers": map[string]any{"content-type": "application/x-www-form-urlencoded", "User-Agent": "rollout/7", "Host": "cfg.internal"},
	})
	require.NoError(t, err)
	r := <-got
	assert.Equal(t, "application/x-www-form-urlencoded", r.header.Get("Content-Type"))
	assert.Equal(t, "rollout/7", r.header.Get("User-Agent"))
	assert.Equal(t, "a=b", r.body)
}

func TestHTTPOutput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		status      int
		body        string
		contentType string
		want        string // "" means a nil output
	}{
		{name: "json object", status: 200, body: `{"a":[1,2],"b":null}`, want: `{"a":[1,2],"b":null}`},
		{name: "json with whitespace kept", status: 201, body: "{\n  \"a\": 1\n}\n", want: "{\n  \"a\": 1\n}\n"},
		{name: "json scalar", status: 200, body: `"done"`, want: `"done"`},
		{name: "empty", status: 200, body: ""},
		{name: "whitespace only", status: 202, body: " \n"},
		{name: "text", status: 200, body: "ok\n", contentType: "text/plain", want: `{"status":200,"body":"ok\n"}`},
		{name: "html", status: 202, body: `<p class="x">hi</p>`, want: `{"status":202,"body":"<p class=\"x\">hi</p>"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := newServer(t, respondWith(tt.status, tt.body, "Content-Type", tt.contentType))
			out, err := runHTTP(t, map[string]any{"url": srv.URL})
			require.NoError(t, err)
			if tt.want == "" {
				assert.Nil(t, out)
				return
			}
			if json.Valid([]byte(tt.body)) {
				assert.Equal(t, tt.want, string(out), "a JSON body is the output byte for byte")
				return
			}
			assert.JSONEq(t, tt.want, string(out))
		})
	}
}

func TestHTTPRetryableStatuses(t *testing.T) {
	t.Parallel()
	for _, code := range []int{500, 502, 503, 504, 408, 429} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			t.Parallel()
			srv, _ := newServer(t, respondWith(code, "try later"))
			_, err := runHTTP(t, map[string]any{"url": srv.URL})
			se := requireStageError(t, err, stage.ClassRetryable, code)
			assert.Zero(t, se.RetryAfter)
		})
	}
}

func TestHTTPPermanentStatuses(t *testing.T) {
	t.Parallel()
	for _, code := range []int{400, 401, 403, 404, 409, 422, 304} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			t.Parallel()
			srv, _ := newServer(t, respondWith(code, `{"error":"no"}`))
			_, err := runHTTP(t, map[string]any{"url": srv.URL})
			requireStageError(t, err, stage.ClassPermanent, code)
		})
	}
}

func TestHTTPRetryAfter(t *testing.T) {
	t.Parallel()
	t.Run("seconds", func(t *testing.T) {
		t.Parallel()
		srv, _ := newServer(t, respondWith(http.StatusTooManyRequests, "", "Retry-After", "2"))
		_, err := runHTTP(t, map[string]any{"url": srv.URL})
		se := requireStageError(t, err, stage.ClassRetryable, http.StatusTooManyRequests)
		assert.Equal(t, 2*time.Second, se.RetryAfter)
	})
	t.Run("http date", func(t *testing.T) {
		t.Parallel()
		at := time.Now().Add(5 * time.Second).UTC().Format(http.TimeFormat)
		srv, _ := newServer(t, respondWith(http.StatusServiceUnavailable, "", "Retry-After", at))
		_, err := runHTTP(t, map[string]any{"url": srv.URL})
		se := requireStageError(t, err, stage.ClassRetryable, http.StatusServiceUnavailable)
		// The date has whole seconds, so the hint is between 4s and 5s (with slack for a slow run).
		assert.Greater(t, se.RetryAfter, 2*time.Second)
		assert.LessOrEqual(t, se.RetryAfter, 5*time.Second)
	})
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		value string
		want  time.Duration
	}{
		{name: "empty", value: "", want: 0},
		{name: "seconds", value: "120", want: 2 * time.Minute},
		{name: "zero", value: "0", want: 0},
		{name: "padded", value: " 3 ", want: 3 * time.Second},
		{name: "negative", value: "-5", want: 0},
		{name: "fraction", value: "1.5", want: 0},
		{name: "overflow", value: "99999999999999999999", want: 0},
		{name: "imf date", value: "Sat, 21 Nov 2026 10:00:30 GMT", want: 30 * time.Second},
		{name: "rfc 850 date", value: "Saturday, 21-Nov-26 10:01:00 GMT", want: time.Minute},
		{name: "asctime date", value: "Sat Nov 21 10:00:10 2026", want: 10 * time.Second},
		{name: "past date", value: "Sat, 21 Nov 2026 09:59:00 GMT", want: 0},
		{name: "garbage", value: "soon", want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, parseRetryAfter(tt.value, now))
		})
	}
}

func TestHTTPDeadlineIsTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()

	_, err := NewHTTP(HTTPOptions{}).Run(ctx, testRequest(map[string]any{"url": srv.URL}))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, stage.ClassTimeout, stage.AsError(err).Class)
}

func TestHTTPClientTimeoutIsTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	h := NewHTTP(HTTPOptions{Client: &http.Client{Timeout: 50 * time.Millisecond}})

	_, err := h.Run(context.Background(), testRequest(map[string]any{"url": srv.URL}))
	assert.Equal(t, stage.ClassTimeout, stage.AsError(err).Class)
}

// An attempt's bound is its stage's timeout (its context's deadline), longer or shorter than
// the default, which bounds only an attempt whose stage sets none: a deploy API that answers
// after the default is not cut at it when the stage allows more (issue 32: every request was
// cut at 30 s whatever the stage's timeout said).
func TestHTTPStageTimeoutReplacesTheDefault(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(300 * time.Millisecond):
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"state":"ready"}`))
		case <-r.Context().Done():
		}
	})
	h := NewHTTP(HTTPOptions{DefaultTimeout: 100 * time.Millisecond})

	_, err := h.Run(context.Background(), testRequest(map[string]any{"url": srv.URL}))
	assert.Equal(t, stage.ClassTimeout, stage.AsError(err).Class, "no stage timeout: the default bounds the attempt")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // the stage's timeout
	defer cancel()
	out, err := h.Run(ctx, testRequest(map[string]any{"url": srv.URL}))
	require.NoError(t, err, "the stage's timeout replaces the default")
	assert.JSONEq(t, `{"state":"ready"}`, string(out))
}

func TestHTTPCancelled(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv, got := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-got
		cancel()
	}()

	_, err := NewHTTP(HTTPOptions{}).Run(ctx, testRequest(map[string]any{"url": srv.URL}))
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, stage.ClassCancelled, stage.AsError(err).Class)
}

func TestHTTPTransportErrorIsRetryable(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens any more: connection refused

	_, err := runHTTP(t, map[string]any{"url": url})
	requireStageError(t, err, stage.ClassRetryable, 0)
}

func TestHTTPResponseSizeLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		chunked bool // no Content-Length, so the cap is found while reading
		size    int
		ok      bool
	}{
		{name: "exactly the limit", size: 64, ok: true},
		{name: "over the limit", size: 65},
		{name: "over the limit chunked", size: 65, chunked: true},
		{name: "far over the limit chunked", size: 1 << 20, chunked: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := `"` + strings.Repeat("x", tt.size-2) + `"`
			srv, _ := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
				if tt.chunked {
					_, _ = io.WriteString(w, body[:1])
					w.(http.Flusher).Flush()
					_, _ = io.WriteString(w, body[1:])
					return
				}
				_, _ = io.WriteString(w, body)
			})
			h := NewHTTP(HTTPOptions{MaxResponseBytes: 64})
			out, err := h.Run(context.Background(), testRequest(map[string]any{"url": srv.URL}))
			if tt.ok {
				require.NoError(t, err)
				assert.Equal(t, body, string(out))
				return
			}
			requireStageError(t, err, stage.ClassPermanent, http.StatusOK)
		})
	}
}

func TestHTTPDefaultResponseLimit(t *testing.T) {
	t.Parallel()
	body := `"` + strings.Repeat("x", int(DefaultMaxResponseBytes)) + `"`
	srv, _ := newServer(t, respondWith(http.StatusOK, body))
	_, err := runHTTP(t, map[string]any{"url": srv.URL})
	requireStageError(t, err, stage.ClassPermanent, http.StatusOK)
}

func TestHTTPRedirects(t *testing.T) {
	t.Parallel()
	t.Run("followed", func(t *testing.T) {
		t.Parallel()
		srv, got := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/old" {
				http.Redirect(w, r, "/new", http.StatusPermanentRedirect)
				return
			}
			_, _ = io.WriteString(w, `{"moved":true}`)
		})
		out, err := runHTTP(t, map[string]any{"method": "POST", "url": srv.URL + "/old", "body": `{"a":1}`})
		require.NoError(t, err)
		assert.Equal(t, `{"moved":true}`, string(out))
		<-got
		second := <-got
		assert.Equal(t, "/new", second.path)
		assert.Equal(t, `{"a":1}`, second.body, "a 308 resends the body")
		assert.Equal(t, testRequest(nil).IdempotencyKey(), second.header.Get("Idempotency-Key"))
	})
	t.Run("to another host: no header of the stage, no Referer", func(t *testing.T) {
		t.Parallel()
		other, atOther := newServer(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `{"there":true}`) })
		srv, atFirst := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/same" {
				http.Redirect(w, r, other.URL+"/elsewhere", http.StatusFound)
				return
			}
			http.Redirect(w, r, "/same", http.StatusFound)
		})
		out, err := runHTTP(t, map[string]any{"url": srv.URL + "/start?token=s3cret", "headers": map[string]any{"X-Api-Key": "k-123", "Authorization": "Bearer b"}})
		require.NoError(t, err)
		assert.JSONEq(t, `{"there":true}`, string(out))
		<-atFirst
		same := <-atFirst
		assert.Equal(t, "k-123", same.header.Get("X-Api-Key"), "the same host gets the stage's headers")
		assert.Empty(t, same.header.Get("Referer"), "no Referer: it would carry the query")
		there := <-atOther
		for _, name := range []string{"X-Api-Key", "Authorization", "Referer", "Idempotency-Key", FenceHeader} {
			assert.Empty(t, there.header.Get(name), "another host gets no %s", name)
		}
		assert.Equal(t, UserAgent, there.header.Get("User-Agent"))
	})
	t.Run("loop stops after the limit", func(t *testing.T) {
		t.Parallel()
		var hits atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			http.Redirect(w, r, "/again", http.StatusFound)
		}))
		t.Cleanup(srv.Close)
		_, err := runHTTP(t, map[string]any{"url": srv.URL})
		requireStageError(t, err, stage.ClassPermanent, http.StatusFound)
		assert.Equal(t, int32(MaxRedirects+1), hits.Load())
	})
	t.Run("custom client policy still applies", func(t *testing.T) {
		t.Parallel()
		srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/again", http.StatusFound)
		})
		client := &http.Client{}
		h := NewHTTP(HTTPOptions{Client: client})
		_, err := h.Run(context.Background(), testRequest(map[string]any{"url": srv.URL}))
		requireStageError(t, err, stage.ClassPermanent, http.StatusFound)
		assert.Nil(t, client.CheckRedirect, "the caller's client is not modified")
	})
}

func TestHTTPInvalidParamsAtRunArePermanent(t *testing.T) {
	t.Parallel()
	_, err := runHTTP(t, map[string]any{"url": "ftp://example.com/x"})
	require.ErrorIs(t, err, ErrInvalidParams)
	assert.Equal(t, stage.ClassPermanent, stage.AsError(err).Class)
}

func TestHTTPValidateParams(t *testing.T) {
	t.Parallel()
	const u = "https://cfg.internal/tenants/t1"
	tests := []struct {
		name   string
		params map[string]any
		param  string // "" means valid
	}{
		{name: "minimal", params: map[string]any{"url": u}},
		{name: "full", params: map[string]any{
			"method": "PATCH", "url": "http://10.0.0.1:8080/x?y=1", "body": "{}",
			"headers": map[string]any{"X-A": "1", "Accept": "application/json"},
		}},
		{name: "headers as string map", params: map[string]any{"url": u, "headers": map[string]string{"X-A": "1"}}},
		{name: "empty method defaults", params: map[string]any{"url": u, "method": ""}},
		{name: "every method", params: map[string]any{"url": u, "method": "DELETE"}},
		{name: "nil params", params: nil, param: "url"},
		{name: "missing url", params: map[string]any{"method": "GET"}, param: "url"},
		{name: "empty url", params: map[string]any{"url": ""}, param: "url"},
		{name: "url not a string", params: map[string]any{"url": 42}, param: "url"},
		{name: "relative url", params: map[string]any{"url": "/tenants/t1"}, param: "url"},
		{name: "url without host", params: map[string]any{"url": "http:///x"}, param: "url"},
		{name: "ftp url", params: map[string]any{"url": "ftp://cfg.internal/x"}, param: "url"},
		{name: "unparsable url", params: map[string]any{"url": "http://a b/"}, param: "url"},
		{name: "unknown method", params: map[string]any{"url": u, "method": "TRACE"}, param: "method"},
		{name: "lower-case method", params: map[string]any{"url": u, "method": "post"}, param: "method"},
		{name: "method not a string", params: map[string]any{"url": u, "method": true}, param: "method"},
		{name: "headers not an object", params: map[string]any{"url": u, "headers": "X-A: 1"}, param: "headers"},
		{name: "header not a string", params: map[string]any{"url": u, "headers": map[string]any{"X-A": 1}}, param: "headers.X-A"},
		{name: "header bad name", params: map[string]any{"url": u, "headers": map[string]any{"X A": "1"}}, param: "headers.X A"},
		{name: "header newline", params: map[string]any{"url": u, "headers": map[string]any{"X-A": "1\r\nX-B: 2"}}, param: "headers.X-A"},
		{name: "header duplicate", params: map[string]any{"url": u, "headers": map[string]any{"X-A": "1", "x-a": "2"}}, param: "headers.x-a"},
		{name: "idempotency key reserved", params: map[string]any{"url": u, "headers": map[string]any{"idempotency-key": "k"}}, param: "headers.idempotency-key"},
		{name: "body not a string", params: map[string]any{"url": u, "body": map[string]any{"a": 1}}, param: "body"},
		{name: "unknown param", params: map[string]any{"url": u, "metod": "POST"}, param: "metod"},
	}
	h := NewHTTP(HTTPOptions{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := h.ValidateParams(tt.params)
			if tt.param == "" {
				require.NoError(t, err)
				return
			}
			requireParamError(t, err, tt.param)
		})
	}
}
