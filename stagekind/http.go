package stagekind

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/executor-dev/executor/domain/stage"
)

// KindHTTP is the kind name of HTTP.
const KindHTTP = "http"

// Defaults of the http kind.
const (
	// DefaultMaxResponseBytes caps the response body read when HTTPOptions leaves it zero.
	DefaultMaxResponseBytes int64 = 1 << 20
	// DefaultHTTPTimeout bounds each request of an attempt whose stage sets no timeout (the
	// first request and each poll of a poll: the polling as a whole is bounded by its own
	// timeout), when HTTPOptions leaves DefaultTimeout zero. A stage's own timeout replaces it
	// (longer or shorter) and bounds the whole attempt.
	DefaultHTTPTimeout = 30 * time.Second
	// MaxRedirects is the most redirects one attempt follows; the next redirect response is
	// returned as is and fails the attempt permanently.
	MaxRedirects = 5
	// UserAgent is sent unless the params' headers set one.
	UserAgent = "executor/1"
)

// HTTPOptions configures the http kind.
type HTTPOptions struct {
	// Client sends the requests. Nil means &http.Client{}: no timeout of its own, an attempt
	// is bounded by its stage's timeout, or DefaultTimeout. The
	// client is not modified: the handler uses a copy whose redirect policy also stops after
	// MaxRedirects redirects and at any redirect to a scheme other than http or https, and
	// whose transport is a clone of Client.Transport (nil: http.DefaultTransport) that the
	// SSRF guard owns: it dials every connection itself, checking each address against Allow,
	// and uses no proxy (HTTP_PROXY and friends are ignored, since a proxy would make the
	// guard check the proxy's address instead of the destination's). The transport's own
	// Dial, DialContext, DialTLS and DialTLSContext functions are not used. A Transport that
	// is not an *http.Transport cannot be guarded: every attempt then fails permanently with
	// an error matching ErrUnguardedTransport.
	Client *http.Client
	// MaxResponseBytes caps the response body; a larger 2xx body fails permanently, and no
	// more than this much (at most 200 bytes) of an error response's body is read for the
	// failure message. Zero or negative means DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// Allow is the destination allow-list (serve's --http-allow), in the syntax of
	// ParseAllowList: IPs, CIDRs, hostnames and "*." wildcards; AllowList says what is always
	// denied and how entries allow. Empty allows any destination but link-local, cloud
	// metadata, unspecified, multicast and broadcast addresses. It is enforced on every
	// address dialled (after DNS) and on every redirect target; a denied destination fails
	// the attempt permanently with an error matching ErrDestinationDenied.
	//
	// NewHTTP cannot return an error: check the entries with ParseAllowList first (or pass
	// what it returned as AllowList). With an invalid entry the kind fails closed: every
	// attempt fails permanently with an error matching ErrInvalidAllow.
	Allow []string
	// AllowList is the allow-list parsed already (serve parses --http-allow once, its errors
	// naming the flag); when it is set, Allow is ignored.
	AllowList *AllowList
	// DefaultTimeout bounds an attempt whose stage sets no timeout (its context has no
	// deadline); zero or negative: DefaultHTTPTimeout.
	DefaultTimeout time.Duration
}

// HTTP is the http kind: one request per attempt. Params, already rendered, are
//
//	method   GET (default), HEAD, POST, PUT, PATCH or DELETE
//	url      required, an absolute http or https URL (what its template inserts is escaped:
//	         see URLParams)
//	headers  optional object of header name to string value ("Host" sets the request's host)
//	body     optional string; when non-empty, Content-Type defaults to application/json
//	success, failure  optional conditions over the response (see judged)
//	poll     optional {url, method, interval, timeout, until, failWhen}: once the request
//	         succeeded, its response is saved as the stage's progress (stage.Request.SaveProgress)
//	         and url is polled until until holds (see runPolled); an attempt that finds a saved
//	         response polls without sending the request again. poll.url may read the response
//	         as .Response: it is a late param (LateParams), rendered during the attempt.
//
// Every attempt carries Idempotency-Key: req.IdempotencyKey() (plan/task/stage/run: the same
// on every attempt of the stage within one run, a new one for a new run unless the stage's
// last attempt is in doubt: then the in-doubt attempt's key), and Executor-Fence:
// req.FenceToken() ("<tenantId>:<epoch>", the fence epoch of the run making the call: a target
// can refuse an epoch lower than the highest it has seen for the task; see stage.Request.Fence
// and FenceHeader), so params may not set those headers, nor Content-Length or
// Transfer-Encoding.
//
// A 2xx response succeeds: a JSON body is the output as is, an empty body outputs null, and
// any other body outputs {"status":<code>,"body":"<text>"}. Transport errors are retryable
// (but a denied destination is permanent, below), a context deadline or client timeout is a
// timeout, a cancelled context returns ctx.Err().
// 408, 429 and 5xx but 501 are retryable with the Retry-After hint; any other status is
// permanent (501 Not Implemented included: the target does not implement the request).
//
// Destinations are checked against HTTPOptions.Allow (see AllowList): a denied one fails
// permanently with an error matching ErrDestinationDenied, and ValidateParams rejects a url
// whose host alone is enough to deny it (an IP literal, or a hostname that a list without IP
// or CIDR entries does not name).
//
// The zero value is not usable; use NewHTTP. An HTTP is safe for concurrent use.
type HTTP struct {
	client   *http.Client
	maxBytes int64
	timeout  time.Duration // HTTPOptions.DefaultTimeout
	guard    *guard
	err      error // a configuration error every attempt fails with (fail closed)
}

var _ stage.ParamValidator = (*HTTP)(nil)

// NewHTTP returns the http kind configured by opts. An invalid opts.Allow, or a Client whose
// Transport is not an *http.Transport, does not make it fail: the returned kind fails every
// attempt permanently with an error matching ErrInvalidAllow or ErrUnguardedTransport.
func NewHTTP(opts HTTPOptions) *HTTP {
	maxBytes := opts.MaxResponseBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxResponseBytes
	}
	h := &HTTP{maxBytes: maxBytes, timeout: opts.DefaultTimeout}
	if h.timeout <= 0 {
		h.timeout = DefaultHTTPTimeout
	}
	allow := opts.AllowList
	if allow == nil {
		parsed, err := ParseAllowList(opts.Allow)
		if err != nil {
			h.err = err
			return h
		}
		allow = parsed
	}
	h.guard = newGuard(allow)
	client := &http.Client{}
	if opts.Client != nil {
		c := *opts.Client
		client = &c
	}
	transport, err := h.guard.transport(client.Transport)
	if err != nil {
		h.err = err
		return h
	}
	client.Transport = transport
	client.CheckRedirect = limitRedirects(h.guard.checkRedirect(client.CheckRedirect))
	h.client = client
	return h
}

// Run sends the request described by req.Params and classifies the outcome. Invalid params
// fail permanently with an error matching ErrInvalidParams. The attempt is bounded by ctx's
// deadline (its stage's timeout), or by HTTPOptions.DefaultTimeout when ctx has none.
func (h *HTTP) Run(ctx context.Context, req stage.Request) (json.RawMessage, error) {
	if h.err != nil {
		return nil, stage.Permanent(h.err)
	}
	p, err := parseHTTPParams(req.Params)
	if err != nil {
		return nil, invalidParams(err)
	}
	if p.poll != nil {
		return h.runPolled(ctx, p, req)
	}
	ctx, cancel := h.bounded(ctx)
	defer cancel()
	hreq, err := p.newRequest(ctx, req)
	if err != nil {
		return nil, invalidParams(paramError("url", err.Error()))
	}
	resp, err := h.client.Do(hreq)
	if err != nil {
		return nil, transportError(ctx, p.target(), err)
	}
	defer drainAndClose(resp.Body)
	if p.success != nil || p.failure != nil {
		return h.judged(ctx, p, p.target(), resp)
	}
	return h.result(ctx, p.target(), resp)
}

// bounded is ctx bounded by HTTPOptions.DefaultTimeout when it has no deadline of its own.
func (h *HTTP) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, h.timeout)
}

// ValidateParams checks the params as Run would, without sending anything. A url whose host
// alone is denied by the allow-list is a *stage.FieldError naming "url" that matches both
// ErrInvalidParams and ErrDestinationDenied.
func (h *HTTP) ValidateParams(params map[string]any) error {
	p, err := parseHTTPParams(params)
	if err != nil || h.guard == nil {
		return err
	}
	if err := h.guard.allow.precheck(p.url.Hostname()); err != nil {
		reason := strings.TrimPrefix(err.Error(), "stagekind: ")
		return &stage.FieldError{Field: "url", Reason: reason, Err: errors.Join(ErrInvalidParams, err)}
	}
	if p.poll != nil && p.poll.url != "" && !strings.Contains(p.poll.url, "{{") {
		u, _ := url.Parse(p.poll.url) // parsePoll checked it
		if err := h.guard.allow.precheck(u.Hostname()); err != nil {
			reason := strings.TrimPrefix(err.Error(), "stagekind: ")
			return &stage.FieldError{Field: "poll.url", Reason: reason, Err: errors.Join(ErrInvalidParams, err)}
		}
	}
	return nil
}

// limitRedirects wraps a client's redirect policy: after MaxRedirects, or on a redirect to a
// non-HTTP scheme, the redirect response itself is returned (and fails permanently). A
// redirect is followed without a Referer (it would carry the query, which may hold a
// secret), and one to another host (or port) than the stage's url without any header the
// stage or the executor set but User-Agent and Content-Type: an X-Api-Key, a fence token or
// an idempotency key is for the host the plan names, never for where it points.
func limitRedirects(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) > MaxRedirects || (req.URL.Scheme != "http" && req.URL.Scheme != "https") {
			return http.ErrUseLastResponse
		}
		req.Header.Del("Referer")
		if req.URL.Host != via[0].URL.Host {
			kept := http.Header{}
			for _, name := range []string{"User-Agent", "Content-Type"} {
				if v := req.Header.Values(name); len(v) > 0 {
					kept[name] = v
				}
			}
			req.Header = kept
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
