package stagekind

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/executor-dev/executor/domain/stage"
)

var _ stage.LateParamer = (*HTTP)(nil)

// LateParams declares "poll.url" late: its template may read .Response, the first
// response ({"status", "headers", "body"}), so it is rendered during the attempt.
func (h *HTTP) LateParams() []string { return []string{"poll.url"} }

// runPolled runs a stage with a poll: the first request, unless an earlier attempt of the stage
// (in this run, or in the run a retry from the checkpoint resumes) saved its response; that
// response saved as the stage's progress before the first poll; then the polls.
func (h *HTTP) runPolled(ctx context.Context, p httpParams, req stage.Request) (json.RawMessage, error) {
	first, resumed, err := savedFirst(req.SavedProgress())
	if err != nil {
		return nil, stage.Permanent(err)
	}
	if !resumed {
		if first, err = h.first(ctx, p, req); err != nil {
			return nil, err
		}
		saved, err := json.Marshal(first)
		if err != nil {
			return nil, stage.Permanent(fmt.Errorf("%s: checkpoint the first response: %w", p.target(), err))
		}
		if err := req.SaveProgress(ctx, saved); err != nil {
			return nil, &stage.Error{Class: stage.ClassRetryable, Message: fmt.Sprintf("%s: checkpoint the first response before polling: %v", p.target(), err), Err: err}
		}
	}
	poll, err := h.pollRequest(p, req, first)
	if err != nil {
		return nil, err
	}
	return h.poll(ctx, p, poll, req)
}

// savedFirst decodes the first response an earlier attempt saved; resumed is false when none.
func savedFirst(saved json.RawMessage) (env conditionEnv, resumed bool, err error) {
	if saved == nil {
		return env, false, nil
	}
	if err := json.Unmarshal(saved, &env); err != nil {
		return env, false, fmt.Errorf("the first response saved in the checkpoint: %w", err)
	}
	return env, true, nil
}

// first sends the stage's request and judges its response as a stage without poll would: a
// response that would not succeed fails the attempt, one that would is returned.
func (h *HTTP) first(ctx context.Context, p httpParams, req stage.Request) (conditionEnv, error) {
	ctx, cancel := h.bounded(ctx)
	defer cancel()
	hreq, err := p.newRequest(ctx, req)
	if err != nil {
		return conditionEnv{}, invalidParams(paramError("url", err.Error()))
	}
	resp, err := h.client.Do(hreq)
	if err != nil {
		return conditionEnv{}, transportError(ctx, p.target(), err)
	}
	defer drainAndClose(resp.Body)
	env, body, err := h.read(ctx, p.target(), resp)
	if err != nil {
		return conditionEnv{}, err
	}
	if _, err := h.judge(ctx, p, p.target(), resp, env, body); err != nil {
		return conditionEnv{}, err
	}
	return env, nil
}

// pollRequest is the params of a poll: poll.method to poll.url (rendered with the first
// response), or to the first response's Location; the stage's headers.
func (h *HTTP) pollRequest(p httpParams, req stage.Request, first conditionEnv) (httpParams, error) {
	raw := p.poll.url
	switch {
	case strings.Contains(raw, "{{") && req.Late == nil:
		return httpParams{}, stage.Permanent(fmt.Errorf("%s: poll.url reads the response, and nothing renders it here", p.target()))
	case strings.Contains(raw, "{{"):
		rendered, err := req.Late("poll.url", raw, map[string]any{"status": first.Status, "headers": first.Headers, "body": first.Body})
		if err != nil {
			return httpParams{}, invalidParams(err)
		}
		raw = rendered
	case raw == "":
		loc := first.Headers["location"]
		if loc == "" {
			return httpParams{}, invalidParams(paramError("poll.url", "is not set, and the first response has no Location header"))
		}
		ref, err := url.Parse(loc)
		if err != nil {
			return httpParams{}, invalidParams(paramError("poll.url", "is not set, and the first response's Location is not a URL"))
		}
		raw = p.url.ResolveReference(ref).String()
	}
	u, err := absoluteURL("poll.url", raw)
	if err != nil {
		return httpParams{}, invalidParams(err)
	}
	poll := httpParams{method: p.poll.method, url: u, header: p.header}
	if u.Host == p.url.Host {
		poll.host = p.host
	}
	return poll, nil
}

// poll polls every poll.interval until poll.until holds (the stage's output is that
// response's body), poll.failWhen holds (a permanent failure, and the saved first response is
// forgotten: a retry from the checkpoint starts the work again), or poll.timeout passes (a
// timeout, the first response kept: a retry from the checkpoint polls again). A poll that
// fails (transport, any status) is polled again.
func (h *HTTP) poll(ctx context.Context, p, poll httpParams, req stage.Request) (json.RawMessage, error) {
	pctx, cancel := context.WithTimeout(ctx, p.poll.timeout)
	defer cancel()
	last := "none answered"
	for polls := 0; ; polls++ {
		if !sleepCtx(pctx, p.poll.interval) {
			if ctx.Err() != nil {
				return nil, transportError(ctx, poll.target(), ctx.Err())
			}
			return nil, &stage.Error{Class: stage.ClassTimeout, Message: fmt.Sprintf(
				"%s: not done after polling for %s (%d polls; the last: %s)", poll.target(), p.poll.timeout, polls, last)}
		}
		env, status, body, err := h.pollOnce(pctx, poll, req)
		if err != nil {
			last = err.Error()
			continue
		}
		switch {
		case p.poll.failWhen != nil && p.poll.failWhen.holds(env):
			msg := fmt.Sprintf("%s: %s failWhen held (%s)%s", poll.target(), status, p.poll.failWhen.src, snippet(body))
			if err := req.SaveProgress(ctx, nil); err != nil {
				msg += "; the first response could not be forgotten: a retry from the checkpoint polls again (" + err.Error() + ")"
			}
			return nil, &stage.Error{Class: stage.ClassPermanent, Code: env.Status, Message: msg}
		case p.poll.until.holds(env):
			return bodyOutput(env.Status, body)
		}
		last = status + snippet(body)
	}
}

// pollOnce sends one poll and reads its response.
func (h *HTTP) pollOnce(ctx context.Context, poll httpParams, req stage.Request) (conditionEnv, string, []byte, error) {
	ctx, cancel := h.bounded(ctx)
	defer cancel()
	hreq, err := poll.newRequest(ctx, req)
	if err != nil {
		return conditionEnv{}, "", nil, err
	}
	resp, err := h.client.Do(hreq)
	if err != nil {
		return conditionEnv{}, "", nil, transportError(ctx, poll.target(), err)
	}
	defer drainAndClose(resp.Body)
	env, body, err := h.read(ctx, poll.target(), resp)
	return env, resp.Status, body, err
}

// sleepCtx waits d, or until ctx ends; it reports whether d passed (never when ctx ended
// already).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
