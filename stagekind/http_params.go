package stagekind

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/executor-dev/executor/domain/stage"
)

// httpMethods are the methods the http kind sends.
var httpMethods = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete,
}

// FenceHeader is the header that carries a call's fencing token, stage.Request.FenceToken
// ("<tenantId>:<epoch>"), on every attempt of the http kind.
const FenceHeader = "Executor-Fence"

// reservedHeaders are set by the handler or derived from the body, so params may not set them.
var reservedHeaders = []string{"Idempotency-Key", FenceHeader, "Content-Length", "Transfer-Encoding"}

// httpParams are the http kind's params, checked.
type httpParams struct {
	method string
	url    *url.URL
	header http.Header
	host   string // from a "Host" header param; empty means the URL's host
	body   string
	// success and failure are the params' conditions over the response (nil: none).
	success, failure *condition
	// poll, when set, polls after the request succeeded until the work it started is done.
	poll *pollParams
}

func parseHTTPParams(params map[string]any) (httpParams, error) {
	if err := checkKnownParams(params, "method", "url", "headers", "body", "success", "failure", "poll"); err != nil {
		return httpParams{}, err
	}
	p := httpParams{method: http.MethodGet, header: http.Header{}}
	var err error
	if p.method, err = parseMethod(params); err != nil {
		return p, err
	}
	if p.url, err = parseURL(params); err != nil {
		return p, err
	}
	if p.header, p.host, err = parseHeaders(params); err != nil {
		return p, err
	}
	if raw, ok := params["body"]; ok && raw != nil {
		s, ok := raw.(string)
		if !ok {
			return p, paramError("body", fmt.Sprintf("must be a string, not %T", raw))
		}
		p.body = s
	}
	if p.success, err = parseCondition(params, "success"); err != nil {
		return p, err
	}
	if p.failure, err = parseCondition(params, "failure"); err != nil {
		return p, err
	}
	if p.poll, err = parsePoll(params); err != nil {
		return p, err
	}
	return p, nil
}

func parseMethod(params map[string]any) (string, error) {
	raw, ok := params["method"]
	if !ok || raw == nil || raw == "" {
		return http.MethodGet, nil
	}
	s, ok := raw.(string)
	if !ok || !slices.Contains(httpMethods, s) {
		return "", paramError("method", fmt.Sprintf("must be one of %s, got %v", strings.Join(httpMethods, ", "), raw))
	}
	return s, nil
}

func parseURL(params map[string]any) (*url.URL, error) {
	raw, ok := params["url"]
	if !ok || raw == nil || raw == "" {
		return nil, paramError("url", "is required")
	}
	s, ok := raw.(string)
	if !ok {
		return nil, paramError("url", fmt.Sprintf("must be a string, not %T", raw))
	}
	return absoluteURL("url", s)
}

func parseHeaders(params map[string]any) (http.Header, string, error) {
	header := http.Header{}
	raw, ok := params["headers"]
	if !ok || raw == nil {
		return header, "", nil
	}
	values := map[string]any{}
	switch m := raw.(type) {
	case map[string]any:
		values = m
	case map[string]string:
		for k, v := range m {
			values[k] = v
		}
	default:
		return nil, "", paramError("headers", fmt.Sprintf("must be an object of strings, not %T", raw))
	}
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	sort.Strings(names) // deterministic: the first bad header is always the same one
	host := ""
	seen := make(map[string]bool, len(names))
	for _, name := range names {
		field := "headers." + name
		v, ok := values[name].(string)
		canonical := http.CanonicalHeaderKey(name)
		switch {
		case !ok:
			return nil, "", paramError(field, fmt.Sprintf("must be a string, not %T", values[name]))
		case !validHeaderName(name):
			return nil, "", paramError(field, "is not a valid header name")
		case !validHeaderValue(v):
			return nil, "", paramError(field, "must not contain control characters such as a newline")
		case slices.Contains(reservedHeaders, canonical):
			return nil, "", paramError(field, "is set by the executor and cannot be given")
		case seen[canonical]:
			return nil, "", paramError(field, "is given more than once (header names are case-insensitive)")
		case canonical == "Host":
			host = v
		default:
			header.Set(canonical, v)
		}
		seen[canonical] = true
	}
	return header, host, nil
}

// validHeaderName reports whether name is an RFC 9110 token.
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range []byte(name) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
		if !ok {
			return false
		}
	}
	return true
}

// validHeaderValue reports whether v has no control characters other than tab.
func validHeaderValue(v string) bool {
	for _, c := range []byte(v) {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// newRequest builds the request of one attempt of sreq.
func (p httpParams) newRequest(ctx context.Context, sreq stage.Request) (*http.Request, error) {
	var body io.Reader // a *strings.Reader lets the client resend the body on a 307/308
	if p.body != "" {
		body = strings.NewReader(p.body)
	}
	req, err := http.NewRequestWithContext(ctx, p.method, p.url.String(), body)
	if err != nil {
		return nil, err
	}
	req.Header = p.header.Clone()
	if p.host != "" {
		req.Host = p.host
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", UserAgent)
	}
	if p.body != "" && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Idempotency-Key", sreq.IdempotencyKey())
	req.Header.Set(FenceHeader, sreq.FenceToken())
	return req, nil
}

// target names the request in error messages: method and URL without credentials, query or
// fragment, which may hold secrets.
func (p httpParams) target() string {
	u := *p.url
	u.User = nil
	u.RawQuery, u.ForceQuery = "", false
	u.Fragment, u.RawFragment = "", ""
	return p.method + " " + u.String()
}

var _ stage.URLParamer = (*HTTP)(nil)

// URLParams declares the "url" param a URL: what its template inserts is escaped for the part
// of the URL it lands in (url.PathEscape in the path, url.QueryEscape in the query or
// fragment; an action before the path begins, such as "{{.Params.endpoint}}/deploy", inserts
// the base as is). See stage.Renderer.Render.
func (h *HTTP) URLParams() []string { return []string{"url"} }
