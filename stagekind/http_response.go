package stagekind

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/executor-dev/executor/domain/stage"
)

// snippetBytes is how much of an error response's body goes into the failure message.
const snippetBytes = 200

// result turns a response into the stage's output or a classified failure.
func (h *HTTP) result(ctx context.Context, target string, resp *http.Response) (json.RawMessage, error) {
	code := resp.StatusCode
	switch {
	case code >= 200 && code <= 299:
		return h.output(ctx, target, resp)
	case code == http.StatusRequestTimeout || code == http.StatusTooManyRequests ||
		(code >= 500 && code != http.StatusNotImplemented): // 501: not implemented, retrying cannot help
		return nil, &stage.Error{
			Class:      stage.ClassRetryable,
			Code:       code,
			Message:    h.statusMessage(target, resp),
			RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()),
		}
	default: // other 4xx, and 1xx/3xx the client did not follow
		return nil, &stage.Error{Class: stage.ClassPermanent, Code: code, Message: h.statusMessage(target, resp)}
	}
}

// output reads a 2xx body, capped at h.maxBytes, and makes it the stage's output.
func (h *HTTP) output(ctx context.Context, target string, resp *http.Response) (json.RawMessage, error) {
	tooLarge := &stage.Error{
		Class:   stage.ClassPermanent,
		Code:    resp.StatusCode,
		Message: fmt.Sprintf("%s: response body exceeds %d bytes", target, h.maxBytes),
	}
	if resp.ContentLength > h.maxBytes {
		return nil, tooLarge
	}
	body, err := h.readCapped(resp)
	if err != nil {
		return nil, transportError(ctx, target, err)
	}
	if int64(len(body)) > h.maxBytes {
		return nil, tooLarge
	}
	return bodyOutput(resp.StatusCode, body)
}

// statusMessage describes a failed response with the start of its body: at most snippetBytes,
// and never more than the response cap.
func (h *HTTP) statusMessage(target string, resp *http.Response) string {
	limit := min(int64(snippetBytes), h.maxBytes)
	buf, _ := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	snippet := buf
	if int64(len(buf)) > limit {
		snippet = buf[:limit]
	}
	text := strings.TrimSpace(strings.ToValidUTF8(string(snippet), ""))
	if int64(len(buf)) > limit {
		text += "..."
	}
	msg := fmt.Sprintf("%s: %s", target, resp.Status)
	if text != "" {
		msg += ": " + text
	}
	return msg
}

// transportError classifies a failure to get a response: a cancelled ctx returns ctx.Err(),
// a destination the allow-list denies is permanent, a deadline (the ctx's or the client's)
// is a timeout, anything else is retryable.
func transportError(ctx context.Context, target string, err error) error {
	ctxErr := ctx.Err()
	if errors.Is(ctxErr, context.Canceled) {
		return ctxErr
	}
	cause := err
	var ue *url.Error
	if errors.As(err, &ue) {
		cause = ue.Err // the url.Error repeats the full URL, which may hold secrets
	}
	msg := fmt.Sprintf("%s: %v", target, cause)
	var ne net.Error
	switch {
	case errors.Is(err, ErrDestinationDenied):
		return &stage.Error{Class: stage.ClassPermanent, Message: msg, Err: err}
	case ctxErr != nil:
		if !errors.Is(err, ctxErr) {
			err = errors.Join(ctxErr, err)
		}
		return &stage.Error{Class: stage.ClassTimeout, Message: msg, Err: err}
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return &stage.Error{Class: stage.ClassTimeout, Message: msg, Err: err}
	default:
		return &stage.Error{Class: stage.ClassRetryable, Message: msg, Err: err}
	}
}
