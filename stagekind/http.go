package stagekind

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/executor-dev/executor/domain/stage"
)

// KindHTTP is the kind name of HTTP.
const KindHTTP = "http"

// Defaults of the http kind.
const (
	// DefaultMaxResponseBytes caps the response body read when HTTPOptions leaves it zero.
	DefaultMaxResponseBytes int64 = 1 << 20
	// DefaultHTTPTimeout is the timeout of the client used when HTTPOptions has none.
	DefaultHTTPTimeout = 30 * time.Second
	// MaxRedirects is the most redirects one attempt follows; the next redirect response is
	// returned as is and fails the attempt permanently.
	MaxRedirects = 5
	// UserAgent is sent unless the params' headers set one.
	UserAgent = "executor/1"
)

// HTTPOptions configures the http kind.
type HTTPOptions struct {
	// Client sends the requests. Nil means &http.Client{Timeout: DefaultHTTPTimeout}. The
	// client is not modified: the handler uses a copy whose redirect policy also stops after
	// MaxRedirects redirects and at any redirect to a scheme other than http or https.
	Client *http.Client
	// MaxResponseBytes caps the response body; a larger 2xx body fails permanently.
	// Zero or negative means DefaultMaxResponseBytes.
	MaxResponseBytes int64
}

// HTTP is the http kind: one request per attempt. Params, already rendered, are
//
//	method   GET (default), HEAD, POST, PUT, PATCH or DELETE
//	url      required, an absolute http or https URL
//	headers  optional object of header name to string value ("Host" sets the request's host)
//	body     optional string; when non-empty, Content-Type defaults to application/json
//
// Every attempt carries Idempotency-Key: req.IdempotencyKey(), so params may not set that
// header, nor Content-Length or Transfer-Encoding.
//
// A 2xx response succeeds: a JSON body is the output as is, an empty body outputs null, and
// any other body outputs {"status":<code>,"body":"<text>"}. Transport errors are retryable,
// a context deadline or client timeout is a timeout, a cancelled context returns ctx.Err().
// 408, 429 and 5xx are retryable with the Retry-After hint; any other status is permanent.
//
// The zero value is not usable; use NewHTTP. An HTTP is safe for concurrent use.
type HTTP struct {
	client   *http.Client
	maxBytes int64
}

var _ stage.ParamValidator = (*HTTP)(nil)

// NewHTTP returns the http kind configured by opts.
func NewHTTP(opts HTTPOptions) *HTTP {
	client := &http.Client{Timeout: DefaultHTTPTimeout}
	if opts.Client != nil {
		c := *opts.Client
		client = &c
	}
	client.CheckRedirect = limitRedirects(client.CheckRedirect)
	maxBytes := opts.MaxResponseBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxResponseBytes
	}
	return &HTTP{client: client, maxBytes: maxBytes}
}

// Run sends the request described by req.Params and classifies the outcome. Invalid params
// fail permanently with an error matching ErrInvalidParams.
func (h *HTTP) Run(ctx context.Context, req stage.Request) (json.RawMessage, error) {
	p, err := parseHTTPParams(req.Params)
	if err != nil {
		return nil, invalidParams(err)
	}
	hreq, err := p.newRequest(ctx, req.IdempotencyKey())
	if err != nil {
		return nil, invalidParams(paramError("url", err.Error()))
	}
	resp, err := h.client.Do(hreq)
	if err != nil {
		return nil, transportError(ctx, p.target(), err)
	}
	defer drainAndClose(resp.Body)
	return h.result(ctx, p.target(), resp)
}

// ValidateParams checks the params as Run would, without sending anything.
func (h *HTTP) ValidateParams(params map[string]any) error {
	_, err := parseHTTPParams(params)
	return err
}

// limitRedirects wraps a client's redirect policy: after MaxRedirects, or on a redirect to a
// non-HTTP scheme, the redirect response itself is returned (and fails permanently).
func limitRedirects(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) > MaxRedirects || (req.URL.Scheme != "http" && req.URL.Scheme != "https") {
			return http.ErrUseLastResponse
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
}

// drainAndClose reads a little of what is left so the connection can be reused, then closes.
func drainAndClose(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 4<<10))
	_ = body.Close()
}
