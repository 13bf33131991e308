package openapitest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// maxChecked bounds the body a Validator keeps to check: a larger answer is checked for its
// status and headers alone.
const maxChecked = 16 << 20

// loaded is docs/openapi.yaml, loaded and validated once per test binary.
var loaded = sync.OnceValues(func() (routers.Router, error) {
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "..", "..", "docs", "openapi.yaml")
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("openapitest: load %s: %w", path, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapitest: %s is not a valid OpenAPI description: %w", path, err)
	}
	doc.Servers = nil // match paths whatever the test server's address
	r, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("openapitest: route %s: %w", path, err)
	}
	return r, nil
})

// Validator checks every answer of the handlers it wraps against docs/openapi.yaml, and fails
// its test, when the test ends, for each answer the description does not allow.
type Validator struct {
	router routers.Router
	mu     sync.Mutex
	seen   int
	wrong  []string
}

// New returns a Validator reporting to tb when tb ends.
func New(tb testing.TB) *Validator {
	tb.Helper()
	r, err := loaded()
	if err != nil {
		tb.Fatal(err)
	}
	v := &Validator{router: r}
	tb.Cleanup(func() { // after the servers the test started are stopped: their answers are in
		tb.Helper()
		for _, w := range v.Mismatches() {
			tb.Errorf("the API answered what docs/openapi.yaml does not allow: %s", w)
		}
	})
	return v
}

// Checked returns how many answers v checked.
func (v *Validator) Checked() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.seen
}

// Mismatches returns what v found wrong so far, one line per answer.
func (v *Validator) Mismatches() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.wrong...)
}

// Wrap returns next, each of whose answers v checks once it is written.
func (v *Validator) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := r.Clone(context.WithoutCancel(r.Context())) // its URL and headers, as they came
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		if err := v.check(req, rec); err != nil {
			v.mu.Lock()
			v.wrong = append(v.wrong, fmt.Sprintf("%s %s → %d: %v", req.Method, req.URL.RequestURI(), rec.status, err))
			v.mu.Unlock()
		}
	})
}

// check reports what in rec's answer to req docs/openapi.yaml does not allow.
func (v *Validator) check(req *http.Request, rec *recorder) error {
	v.mu.Lock()
	v.seen++
	v.mu.Unlock()
	unrouted := rec.status == http.StatusNotFound || rec.status == http.StatusMethodNotAllowed ||
		rec.status == http.StatusUnauthorized // without a token, a path that is no route is a 401 (api.md)
	route, params, err := v.router.FindRoute(routable(req))
	if err == nil {
		path := routable(req).URL.EscapedPath()
		trimmed := path
		if len(path) > 1 {
			trimmed = strings.TrimSuffix(path, "/")
		}
		switch {
		case !literally(route.Path, trimmed):
			err = fmt.Errorf("%s is not %s as written", req.URL.EscapedPath(), route.Path)
		case trimmed != path && unrouted:
			return nil // a trailing slash: served by a sub-router's root (/v1/plans/), else no route
		}
	}
	if err != nil {
		if unrouted {
			return nil // a path or method the API does not serve, answered as such
		}
		return fmt.Errorf("no operation describes it: %w", err)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		},
		Status: rec.status,
		Header: rec.Header(),
		Body:   io.NopCloser(bytes.NewReader(rec.body.Bytes())),
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true, MultiError: true,
			ExcludeResponseBody: rec.overflow || !jsonBody(rec.Header().Get("Content-Type")),
		},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return err
	}
	return declaredType(route, rec)
}

// jsonBody reports whether a body of media type ct is one the Validator checks against its
// schema (the others, HTML, scripts, metrics, an event stream, for their type alone).
func jsonBody(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.TrimSpace(mt)
	return mt == "application/json" || mt == "application/problem+json"
}

// declaredType reports an answer with a body whose Content-Type its response does not list
// (ValidateResponse checks it only for the bodies it decodes).
func declaredType(route *routers.Route, rec *recorder) error {
	resp := route.Operation.Responses.Status(rec.status)
	if resp == nil || resp.Value == nil || len(resp.Value.Content) == 0 || rec.wrote == 0 {
		return nil
	}
	ct := rec.Header().Get("Content-Type")
	if resp.Value.Content.Get(ct) == nil {
		return fmt.Errorf("response Content-Type %q is not one of %v", ct, slices.Sorted(maps.Keys(resp.Value.Content)))
	}
	return nil
}

// routable is req as the description's router can match it: a path parameter holding an
// escaped slash (a%2Fb, which the API reads as one segment and refuses) as one segment.
func routable(req *http.Request) *http.Request {
	escaped := strings.ReplaceAll(req.URL.EscapedPath(), "%2f", "%2F")
	if !strings.Contains(escaped, "%2F") {
		return req
	}
	r := req.Clone(req.Context())
	r.URL.Path = strings.ReplaceAll(escaped, "%2F", "_")
	r.URL.RawPath = ""
	return r
}

// CheckRequest reports what in req docs/openapi.yaml does not allow: no operation for its
// method and path, a parameter or a body its schema refuses (a plan file is checked as the
// POST /v1/plans it would be sent with).
func CheckRequest(req *http.Request) error {
	r, err := loaded()
	if err != nil {
		return err
	}
	route, params, err := r.FindRoute(req)
	if err != nil {
		return fmt.Errorf("no operation describes %s %s: %w", req.Method, req.URL.Path, err)
	}
	return openapi3filter.ValidateRequest(req.Context(), &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true},
	})
}

// literally reports whether path, as sent (escaped), is pattern's path as written: every
// segment but the parameters the same, no escaped letter (the router matches /%68ealthz to
// /healthz; the API does not).
func literally(pattern, path string) bool {
	want, got := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(want) != len(got) {
		return false
	}
	for i, w := range want {
		if !strings.HasPrefix(w, "{") && w != got[i] {
			return false
		}
	}
	return true
}
