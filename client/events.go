package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/executor-dev/executor/wire"
)

// Event kinds of GET /v1/events: the transitions, and the gap a resumed stream starts with
// when events after the client's last one are gone (reload the state then).
const (
	EventPlan  = "plan"
	EventTask  = "task"
	EventStage = "stage"
	// EventUndo: a task rolling back undid a stage (its Stage is the stage's index).
	EventUndo = "undo"
	EventGap  = "gap"
)

// Defaults of FollowEvents.
const (
	// DefaultEventRetry is the delay before a reconnection until the server sets its own
	// (its "retry:" line, 2 s).
	DefaultEventRetry = 2 * time.Second
	// MaxEventRetry bounds the delay between reconnections, which doubles while they fail.
	MaxEventRetry = 30 * time.Second
	// DefaultEventIdle is how long a connection may stay silent before it is taken for dead
	// and reconnected: three of the server's heartbeats (one every 15 s).
	DefaultEventIdle = 45 * time.Second
)

// maxEventLine bounds one line of the event stream.
const maxEventLine = 1 << 20

// EventsQuery selects the events FollowEvents reads (GET /v1/events) and tells the caller
// about its connection. Every field is optional.
type EventsQuery struct {
	// Plan keeps one plan's events: its own and its tasks'.
	Plan string
	// Tenant keeps one tenant's task and stage events (with Plan, also that plan's own).
	Tenant string
	// LastEventID resumes after that event (the ID of an event read before): the events
	// after it come first. Empty: new events only, nothing is replayed.
	LastEventID string
	// Idle is how long a connection may stay silent (not even a heartbeat) before it is
	// dropped and resumed; 0: DefaultEventIdle.
	Idle time.Duration
	// OnConnect, when set, is called each time the stream is open (its answer's header
	// read): resumed is false for the first connection, true for a reconnection.
	OnConnect func(resumed bool)
	// OnDrop, when set, is called when an open stream ended or a reconnection failed, with
	// why, the id it resumes after (empty: none read yet) and the delay before it tries again.
	OnDrop func(err error, lastEventID string, retry time.Duration)
}

// FollowEvents reads the server-sent events of GET /v1/events?plan=&tenant= and calls fn
// with each, in order, until ctx ends (it returns ctx's error) or fn returns an error (it
// returns it). A gap reaches fn as a wire.Event of Kind EventGap and nothing else.
//
// The first connection's failure is returned as it is (a transport error, or an *Error for a
// non-2xx answer, such as a 400 naming a bad plan or tenant). Once a stream was open, a
// dropped connection (the executor restarted, a proxy cut it, a stream silent for longer
// than q.Idle, a 5xx or 429 answer, a transport error) is resumed like a browser's
// EventSource: after the server's retry delay (doubling, up to MaxEventRetry, while
// reconnections fail), with Last-Event-ID set to the last event's id, so that no event is
// missed nor seen twice; another non-2xx answer (401, 403, a 400 refusing the id) is
// returned. The request is bounded by RequestTimeout until the answer's header, not after.
func (c *Client) FollowEvents(ctx context.Context, q EventsQuery, fn func(wire.Event) error) error {
	f := follower{c: c, q: q, fn: fn, last: q.LastEventID, retry: DefaultEventRetry}
	if f.q.Idle <= 0 {
		f.q.Idle = DefaultEventIdle
	}
	delay := time.Duration(0)
	for opened := false; ; {
		open, err := f.stream(ctx, opened)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var fe fnError
		if errors.As(err, &fe) {
			return fe.err
		}
		if !opened && !open || !retryable(err) {
			return err
		}
		opened = opened || open
		switch {
		case open || delay == 0:
			delay = f.retry
		default:
			delay = min(2*delay, max(MaxEventRetry, f.retry))
		}
		if q.OnDrop != nil {
			q.OnDrop(err, f.last, delay)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// fnError is an error of FollowEvents' fn: it ends the stream as it is.
type fnError struct{ err error }

func (e fnError) Error() string { return e.err.Error() }

// retryable reports whether a stream that ended with err is worth reconnecting: not on an
// answer the server would give again (a 4xx but 408 and 429).
func retryable(err error) bool {
	st := StatusCode(err)
	return st == 0 || st >= 500 || st == http.StatusTooManyRequests || st == http.StatusRequestTimeout
}

// follower is the state of one FollowEvents across its connections.
type follower struct {
	c     *Client
	q     EventsQuery
	fn    func(wire.Event) error
	last  string        // the last event's id: Last-Event-ID of the next connection
	retry time.Duration // the server's reconnection delay
}

// errIdle ends a connection that stayed silent for longer than EventsQuery.Idle.
var errIdle = errors.New("client: the event stream stayed silent")

// stream opens one connection and reads it until it ends; open reports whether it got a 2xx
// answer. The error is never nil: the stream ended somehow (io.EOF when the server closed it).
func (f *follower) stream(ctx context.Context, resumed bool) (open bool, err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	v := url.Values{}
	if f.q.Plan != "" {
		v.Set("plan", f.q.Plan)
	}
	if f.q.Tenant != "" {
		v.Set("tenant", f.q.Tenant)
	}
	u := f.c.base + "/v1/events"
	if len(v) > 0 {
		u += "?" + v.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, fmt.Errorf("client: GET /v1/events: %w", err)
	}
	req.Header.Set("Accept", "text/event-stream, application/problem+json")
	req.Header.Set("Cache-Control", "no-cache")
	if f.last != "" {
		req.Header.Set("Last-Event-ID", f.last)
	}
	if f.c.UserAgent != "" {
		req.Header.Set("User-Agent", f.c.UserAgent)
	}
	if f.c.token != "" {
		req.Header.Set("Authorization", "Bearer "+f.c.token)
	}
	// The answer's header within RequestTimeout, then silence for at most Idle at a time.
	timeout := f.c.RequestTimeout
	watchdog := time.AfterFunc(forever(timeout), func() { cancel(errIdle) })
	defer watchdog.Stop()
	resp, err := f.c.hc.Do(req)
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && errors.Is(cause, errIdle) && ctx.Err() != nil {
			return false, fmt.Errorf("client: GET /v1/events: no answer within %s", timeout)
		}
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return false, decodeError(resp)
	}
	watchdog.Reset(f.q.Idle)
	if f.q.OnConnect != nil {
		f.q.OnConnect(resumed)
	}
	err = f.read(resp.Body, func() { watchdog.Reset(f.q.Idle) })
	if cause := context.Cause(ctx); errors.Is(cause, errIdle) {
		return true, fmt.Errorf("%w for %s", errIdle, f.q.Idle)
	}
	if err == nil {
		err = io.EOF
	}
	return true, err
}

// forever is d, or a long time when d is not positive (no bound).
func forever(d time.Duration) time.Duration {
	if d <= 0 {
		return 100 * 365 * 24 * time.Hour
	}
	return d
}

// read parses the server-sent events of body and hands each to fn; alive is called on every
// line read. It returns when the body ends (nil), fails, or fn fails (an fnError).
func (f *follower) read(body io.Reader, alive func()) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 4096), maxEventLine)
	var id, name string
	var data strings.Builder
	hasID, hasData := false, false
	for sc.Scan() {
		alive()
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" { // dispatch
			if hasID {
				f.last = id
			}
			if hasData || name != "" {
				if err := f.dispatch(id, name, data.String()); err != nil {
					return fnError{err}
				}
			}
			id, name, hasID, hasData = "", "", false, false
			data.Reset()
			continue
		}
		if strings.HasPrefix(line, ":") { // a comment: the heartbeat
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			id, hasID = value, true
		case "event":
			name = value
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.WriteString(value)
			hasData = true
		case "retry":
			if ms, err := strconv.Atoi(value); err == nil && ms >= 0 {
				f.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
	return sc.Err()
}

// dispatch decodes one event and hands it to fn.
func (f *follower) dispatch(id, name, data string) error {
	if name == EventGap {
		return f.fn(wire.Event{Kind: EventGap})
	}
	var e wire.Event
	if data != "" {
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			return fmt.Errorf("client: GET /v1/events: event %s: %w", id, err)
		}
	}
	if e.Kind == "" {
		e.Kind = name
	}
	if e.ID == "" {
		e.ID = id
	}
	return f.fn(e)
}
