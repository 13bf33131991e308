package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/client"
	"github.com/executor-dev/executor/wire"
)

// sseConn is what the fake event stream does with one connection.
type sseConn func(w http.ResponseWriter, r *http.Request)

// sseServer answers the n-th connection to GET /v1/events with conns[n] (the last one for
// any after) and records every request.
type sseServer struct {
	mu    sync.Mutex
	reqs  []*http.Request
	conns []sseConn
	srv   *httptest.Server
}

func newSSEServer(t *testing.T, conns ...sseConn) *sseServer {
	t.Helper()
	s := &sseServer{conns: conns}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, r.Clone(context.Background()))
		conn := s.conns[min(n, len(s.conns)-1)]
		s.mu.Unlock()
		conn(w, r)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sseServer) requests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.reqs...)
}

// stream answers 200 text/event-stream and writes the chunks, flushed one by one; then it
// holds the connection open until the client goes (hold) or closes it.
func stream(hold bool, chunks ...string) sseConn {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, c := range chunks {
			_, _ = io.WriteString(w, c)
			w.(http.Flusher).Flush()
		}
		if hold {
			<-r.Context().Done()
		}
	}
}

// problem answers status with a problem+json body.
func problem(status int, detail string) sseConn {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(status)
		_, _ = fmt.Fprintf(w, `{"title":%q,"status":%d,"detail":%q}`, http.StatusText(status), status, detail)
	}
}

func sse(id, kind, data string) string {
	return fmt.Sprintf("id: %s\nevent: %s\ndata: %s\n\n", id, kind, data)
}

// follow runs FollowEvents until it has seen want events (then it cancels it) or it returns.
func follow(t *testing.T, url string, q client.EventsQuery, want int) ([]wire.Event, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []wire.Event
	err := client.New(url, "tok", nil).FollowEvents(ctx, q, func(e wire.Event) error {
		got = append(got, e)
		if len(got) == want {
			cancel()
		}
		return nil
	})
	require.NotErrorIs(t, ctx.Err(), context.DeadlineExceeded, "events so far: %v", got)
	return got, err
}

func kindsAndIDs(events []wire.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.Kind + ":" + e.ID
	}
	return out
}

func TestFollowEvents(t *testing.T) {
	t.Parallel()
	planEvent := `{"id":"%s","kind":"%s","at":"2026-11-21T18:59:54.1Z","planId":"01JPLAN","tenantId":"t1","status":"%s","stage":1,"stageName":"b"}`
	tests := []struct {
		name  string
		q     client.EventsQuery
		conns []sseConn
		want  []string // kind:id of the events fn gets
		// lastIDs are the Last-Event-ID header of each connection.
		lastIDs []string
		drops   int
	}{
		{
			name: "one stream: events, heartbeats, a multi-line data field",
			q:    client.EventsQuery{Plan: "01JPLAN", Tenant: "t1"},
			conns: []sseConn{stream(true, "retry: 2000\n\n", ": heartbeat\n\n",
				sse("1", "task", fmt.Sprintf(planEvent, "1", "task", "RUNNING")),
				"id: 2\nevent: stage\ndata: {\"id\":\"2\",\"kind\":\"stage\",\ndata: \"planId\":\"01JPLAN\",\"status\":\"RUNNING\",\"stage\":0}\n\n",
				": heartbeat\n\n",
				sse("3", "plan", `{"id":"3","kind":"plan","planId":"01JPLAN","status":"COMPLETED"}`))},
			want:    []string{"task:1", "stage:2", "plan:3"},
			lastIDs: []string{""},
		},
		{
			name: "a dropped stream resumes after the last event, and a gap reaches fn",
			q:    client.EventsQuery{Plan: "01JPLAN"},
			conns: []sseConn{
				stream(false, "retry: 10\n\n", sse("1", "task", fmt.Sprintf(planEvent, "1", "task", "RUNNING")),
					sse("2", "stage", fmt.Sprintf(planEvent, "2", "stage", "RUNNING"))),
				stream(true, "retry: 10\n\n", "event: gap\ndata: {}\n\n", sse("7", "plan", fmt.Sprintf(planEvent, "7", "plan", "COMPLETED"))),
			},
			want:    []string{"task:1", "stage:2", "gap:", "plan:7"},
			lastIDs: []string{"", "2"},
			drops:   1,
		},
		{
			name: "a 503 while reconnecting is tried again with the same id",
			q:    client.EventsQuery{LastEventID: "41"},
			conns: []sseConn{
				stream(false, "retry: 10\n\n", sse("42", "task", fmt.Sprintf(planEvent, "42", "task", "FAILED"))),
				problem(http.StatusServiceUnavailable, "redis away"),
				stream(true, sse("43", "task", fmt.Sprintf(planEvent, "43", "task", "PENDING"))),
			},
			want:    []string{"task:42", "task:43"},
			lastIDs: []string{"41", "42", "42"},
			drops:   2,
		},
		{
			name: "a silent stream is taken for dead and resumed",
			q:    client.EventsQuery{Idle: 100 * time.Millisecond},
			conns: []sseConn{
				stream(true, "retry: 10\n\n", sse("5", "task", fmt.Sprintf(planEvent, "5", "task", "RUNNING"))),
				stream(true, sse("6", "task", fmt.Sprintf(planEvent, "6", "task", "COMPLETED"))),
			},
			want:    []string{"task:5", "task:6"},
			lastIDs: []string{"", "5"},
			drops:   1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newSSEServer(t, tt.conns...)
			var mu sync.Mutex
			var connects []bool
			var drops []error
			q := tt.q
			q.OnConnect = func(resumed bool) { mu.Lock(); connects = append(connects, resumed); mu.Unlock() }
			q.OnDrop = func(err error, _ string, _ time.Duration) { mu.Lock(); drops = append(drops, err); mu.Unlock() }
			got, err := follow(t, s.srv.URL, q, len(tt.want))
			require.ErrorIs(t, err, context.Canceled)
			assert.Equal(t, tt.want, kindsAndIDs(got))

			reqs := s.requests()
			require.Len(t, reqs, len(tt.lastIDs))
			for i, r := range reqs {
				assert.Equal(t, tt.lastIDs[i], r.Header.Get("Last-Event-ID"), "connection %d", i)
				assert.Equal(t, "/v1/events", r.URL.Path)
				assert.Equal(t, tt.q.Plan, r.URL.Query().Get("plan"))
				assert.Equal(t, tt.q.Tenant, r.URL.Query().Get("tenant"))
				assert.Equal(t, "Bearer tok", r.Header.Get("Authorization"))
			}
			mu.Lock()
			defer mu.Unlock()
			assert.Len(t, drops, tt.drops, "drops: %v", drops)
			require.NotEmpty(t, connects)
			assert.False(t, connects[0], "the first connection is not a resumption")
			for _, resumed := range connects[1:] {
				assert.True(t, resumed)
			}
		})
	}
	t.Run("the decoded event", func(t *testing.T) {
		t.Parallel()
		s := newSSEServer(t, stream(true, sse("9", "stage", fmt.Sprintf(planEvent, "9", "stage", "RUNNING"))))
		got, err := follow(t, s.srv.URL, client.EventsQuery{}, 1)
		require.ErrorIs(t, err, context.Canceled)
		require.Len(t, got, 1)
		assert.Equal(t, wire.Event{ID: "9", Kind: "stage", At: time.Date(2026, 11, 21, 18, 59, 54, 100e6, time.UTC),
			PlanID: "01JPLAN", TenantID: "t1", Status: "RUNNING", Stage: 1, StageName: "b"}, got[0])
	})
}

// The first connection's failure is returned at once; so is a 4xx when reconnecting, and an
// error of fn.
func TestFollowEventsFails(t *testing.T) {
	t.Parallel()
	stop := errors.New("enough")
	tests := []struct {
		name       string
		conns      []sseConn
		fnErr      error
		wantStatus int
		wantErr    error
		wantConns  int
	}{
		{name: "a 400 at once", conns: []sseConn{problem(http.StatusBadRequest, "plan: not a ULID")}, wantStatus: 400, wantConns: 1},
		{name: "a 503 at once", conns: []sseConn{problem(http.StatusServiceUnavailable, "not ready")}, wantStatus: 503, wantConns: 1},
		{
			name: "a 401 when reconnecting",
			conns: []sseConn{stream(false, "retry: 10\n\n", sse("1", "task", `{"id":"1","kind":"task"}`)),
				problem(http.StatusUnauthorized, "token revoked")},
			wantStatus: 401, wantConns: 2,
		},
		{
			name:    "fn's error",
			conns:   []sseConn{stream(true, sse("1", "task", `{"id":"1","kind":"task"}`))},
			fnErr:   stop,
			wantErr: stop, wantConns: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newSSEServer(t, tt.conns...)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := client.New(s.srv.URL, "", nil).FollowEvents(ctx, client.EventsQuery{}, func(wire.Event) error { return tt.fnErr })
			require.Error(t, err)
			require.NoError(t, ctx.Err())
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
			}
			assert.Equal(t, tt.wantStatus, client.StatusCode(err))
			assert.Len(t, s.requests(), tt.wantConns)
		})
	}
}

// An unreachable server on the first connection is a transport error, not a retry loop.
func TestFollowEventsUnreachable(t *testing.T) {
	t.Parallel()
	s := newSSEServer(t, stream(false))
	url := s.srv.URL
	s.srv.Close()
	err := client.New(url, "", nil).FollowEvents(context.Background(), client.EventsQuery{}, func(wire.Event) error { return nil })
	require.Error(t, err)
	assert.Equal(t, 0, client.StatusCode(err))
}
