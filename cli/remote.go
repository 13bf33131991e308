package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/executor-dev/executor/api"
	"github.com/executor-dev/executor/client"
)

// maxProblemBody bounds how much of an error answer call reads.
const maxProblemBody = 64 << 10

// call sends one request of the rollout-control routes (bulk retry, gate decisions, the lock
// tools), which package client has no methods for, the way client.Client sends its own: to
// --server with --token, bounded by client.DefaultRequestTimeout, body (when not nil) as JSON.
// A 2xx answer is decoded into out; any other is a *client.Error carrying the server's
// problem, so that it prints, and sets the exit status, like every other remote error.
func (a *app) call(ctx context.Context, method, path string, body, out any) error {
	c, err := a.client() // checks --server
	if err != nil {
		return err
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, client.DefaultRequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL()+path, rd)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", client.ContentTypeJSON)
	}
	req.Header.Set("Accept", "application/json, application/problem+json")
	req.Header.Set("User-Agent", c.UserAgent)
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err // a *url.Error: it names the method and URL
	}
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxProblemBody))
		_ = resp.Body.Close()
	}()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return remoteError(resp)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: decode %d answer: %w", method, path, resp.StatusCode, err)
	}
	return nil
}

// remoteError turns a non-2xx answer into a *client.Error: its problem+json body, or a
// problem made of the status and a short excerpt of any other body.
func remoteError(resp *http.Response) error {
	e := &client.Error{Status: resp.StatusCode}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxProblemBody))
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var p api.Problem
	if (mt == api.ProblemContentType || mt == "application/json") && json.Unmarshal(raw, &p) == nil {
		e.Problem = p
		if e.Problem.Status == 0 {
			e.Problem.Status = resp.StatusCode
		}
		if e.Problem.Title == "" {
			e.Problem.Title = http.StatusText(resp.StatusCode)
		}
		return e
	}
	e.Problem = api.Problem{Status: resp.StatusCode, Title: http.StatusText(resp.StatusCode), Detail: truncate(string(raw), 200)}
	return e
}
