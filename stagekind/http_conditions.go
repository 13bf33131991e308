package stagekind

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/executor-dev/executor/domain/stage"
)

// conditionEnv is what an http condition sees: the response's status, its headers
// (lower-case names, first value) and its body (parsed JSON when it is JSON, else the text).
type conditionEnv struct {
	Status  int               `expr:"status" json:"status"`
	Headers map[string]string `expr:"headers" json:"headers"`
	Body    any               `expr:"body" json:"body"`
}

// httpConditions are the http kind's conditions (success, failure, poll.until, poll.failWhen).
var httpConditions = conditionLang{name: "http", env: conditionEnv{}, over: "status, headers and body"}

// parseCondition reads params[name], an optional condition over the response, and compiles it.
func parseCondition(params map[string]any, name string) (*condition, error) {
	return httpConditions.parse(params, name)
}

// judged is result for a request whose params set conditions: the failure condition holding
// fails at once, whatever the status; the success condition decides success (not holding:
// retryable, under the stage's retry policy, with the response's Retry-After); without one,
// the status decides as usual.
func (h *HTTP) judged(ctx context.Context, p httpParams, target string, resp *http.Response) (json.RawMessage, error) {
	env, body, err := h.read(ctx, target, resp)
	if err != nil {
		return nil, err
	}
	return h.judge(ctx, p, target, resp, env, body)
}

// read reads a response's body (capped) and what conditions see of it.
func (h *HTTP) read(ctx context.Context, target string, resp *http.Response) (conditionEnv, []byte, error) {
	body, err := h.readCapped(resp)
	if err != nil {
		return conditionEnv{}, nil, transportError(ctx, target, err)
	}
	if int64(len(body)) > h.maxBytes {
		return conditionEnv{}, nil, &stage.Error{Class: stage.ClassPermanent, Code: resp.StatusCode, Message: fmt.Sprintf("%s: response body exceeds %d bytes", target, h.maxBytes)}
	}
	env := conditionEnv{Status: resp.StatusCode, Headers: map[string]string{}, Body: string(body)}
	for name, vs := range resp.Header {
		env.Headers[strings.ToLower(name)] = vs[0]
	}
	var parsed any
	if json.Unmarshal(body, &parsed) == nil {
		env.Body = parsed
	}
	return env, body, nil
}

// judge decides a response read (see judged).
func (h *HTTP) judge(ctx context.Context, p httpParams, target string, resp *http.Response, env conditionEnv, body []byte) (json.RawMessage, error) {
	msg := func(what string) string {
		return fmt.Sprintf("%s: %s %s (%s)%s", target, resp.Status, what, conditionText(p, what), snippet(body))
	}
	switch {
	case p.failure != nil && p.failure.holds(env):
		return nil, &stage.Error{Class: stage.ClassPermanent, Code: resp.StatusCode, Message: msg("failure condition held")}
	case p.success != nil && p.success.holds(env):
		return bodyOutput(resp.StatusCode, body)
	case p.success != nil:
		return nil, &stage.Error{Class: stage.ClassRetryable, Code: resp.StatusCode, Message: msg("success condition not met"),
			RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
	}
	resp.Body = io.NopCloser(bytes.NewReader(body)) // the status decides, as without conditions
	return h.result(ctx, target, resp)
}

// conditionText is the condition a message names.
func conditionText(p httpParams, what string) string {
	if strings.HasPrefix(what, "failure") {
		return p.failure.src
	}
	return p.success.src
}

// snippet is the start of a body for a message.
func snippet(body []byte) string {
	text := strings.TrimSpace(strings.ToValidUTF8(string(body[:min(len(body), snippetBytes)]), ""))
	if text == "" {
		return ""
	}
	if len(body) > snippetBytes {
		text += "..."
	}
	return ": " + text
}

// readCapped reads a response body, at most one byte over h.maxBytes: one byte more than
// allowed tells an oversized body from one that fits exactly.
func (h *HTTP) readCapped(resp *http.Response) ([]byte, error) {
	limit := h.maxBytes
	if limit < math.MaxInt64 {
		limit++
	}
	return io.ReadAll(io.LimitReader(resp.Body, limit))
}

// bodyOutput is a successful body as the stage's output: JSON as it is, nothing as null, any
// other text as {"status":<code>,"body":"<text>"}.
func bodyOutput(code int, body []byte) (json.RawMessage, error) {
	switch {
	case len(bytes.TrimSpace(body)) == 0:
		return nil, nil
	case json.Valid(body):
		return body, nil
	}
	return json.Marshal(struct {
		Status int    `json:"status"`
		Body   string `json:"body"`
	}{code, string(body)})
}
