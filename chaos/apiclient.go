//go:build chaos

package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// requestTimeout bounds one API request: a frozen executor, or one waiting on a frozen
// Redis, costs the caller this much before it tries another executor.
const requestTimeout = 10 * time.Second

// Answer is one API request's outcome.
type Answer struct {
	Via        string        // the executor asked
	Method     string        // the request's
	Path       string        // the request's
	Code       int           // 0 when no answer came (Err)
	Body       []byte        // the answer's body
	RetryAfter time.Duration // its Retry-After
	Err        error         // the transport error, when no answer came
	Sent, Got  time.Time
	// Undecided (Try): some try of the request got no answer, or a 503, so it may have taken
	// effect although the answer that decided it says otherwise (an executor killed, frozen or
	// cut off after it acted and before it answered).
	Undecided bool
}

// OK reports a 2xx answer.
func (a Answer) OK() bool { return a.Err == nil && a.Code >= 200 && a.Code < 300 }

// Retryable reports an answer to try again later, maybe elsewhere: none at all (the executor
// is frozen, killed, or restarting), 503 (Redis away, claims waiting after a data loss) or
// 429 (busy).
func (a Answer) Retryable() bool {
	return a.Err != nil || a.Code == http.StatusServiceUnavailable || a.Code == http.StatusTooManyRequests
}

// Problem is the answer's problem type and detail, or the transport error.
func (a Answer) Problem() string {
	if a.Err != nil {
		return a.Err.Error()
	}
	var p wireProblem
	if json.Unmarshal(a.Body, &p) == nil && p.Type != "" {
		return fmt.Sprintf("%d %s: %s", a.Code, p.Type, p.Detail)
	}
	return fmt.Sprintf("%d %s", a.Code, strings.TrimSpace(string(a.Body)))
}

// Decode decodes the body into v.
func (a Answer) Decode(v any) error {
	if err := json.Unmarshal(a.Body, v); err != nil {
		return fmt.Errorf("%s %s via %s: answer %d is not the expected JSON: %w: %.300s", a.Method, a.Path, a.Via, a.Code, err, a.Body)
	}
	return nil
}

// API sends the workload's and the operator's requests. Every 5xx answer other than 503 is
// recorded in the history: the API promises 503, never 500, while Redis is away.
type API struct {
	client *http.Client
	hist   *History
}

// NewAPI returns an API client recording into hist.
func NewAPI(hist *History) *API {
	return &API{client: &http.Client{Timeout: requestTimeout}, hist: hist}
}

// Do sends one request to the executor e. body, when not nil, is sent as JSON.
func (a *API) Do(ctx context.Context, e *Executor, method, path string, body any, header http.Header) Answer {
	ans := Answer{Via: e.Name, Method: method, Path: path, Sent: time.Now()}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			ans.Err = err
			return ans
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.URL()+path, rd)
	if err != nil {
		ans.Err = err
		return ans
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.client.Do(req)
	ans.Got = time.Now()
	if err != nil {
		ans.Err = err
		return ans
	}
	defer resp.Body.Close()
	ans.Code = resp.StatusCode
	ans.Body, ans.Err = io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if ans.Err != nil {
		ans.Code = 0
		return ans
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
		ans.RetryAfter = time.Duration(s) * time.Second
	}
	if ans.Code >= 500 && ans.Code != http.StatusServiceUnavailable {
		a.hist.AddServerError(ans)
	}
	return ans
}

// Try sends the request to executors chosen by pick until an answer is not Retryable or ctx
// ends, waiting between tries (Retry-After, at most 3 s). It returns the last answer (with
// Undecided set when a try got no answer or a 503) and how many tries it took.
func (a *API) Try(ctx context.Context, pick func() *Executor, method, path string, body any, header http.Header) (Answer, int) {
	var ans Answer
	undecided := false
	for tries := 1; ; tries++ {
		ans = a.Do(ctx, pick(), method, path, body, header)
		undecided = undecided || ans.Err != nil || ans.Code == http.StatusServiceUnavailable
		ans.Undecided = undecided
		if !ans.Retryable() || ctx.Err() != nil {
			return ans, tries
		}
		wait := min(max(ans.RetryAfter, 300*time.Millisecond), 3*time.Second)
		select {
		case <-ctx.Done():
			return ans, tries
		case <-time.After(wait):
		}
	}
}
