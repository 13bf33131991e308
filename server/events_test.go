package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/api"
	"github.com/executor-dev/executor/infra/eventstream"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
)

// sse is one server-sent event as read off the wire.
type sse struct {
	id, name string
	data     api.Event
}

// sseStream reads server-sent events from GET url.
type sseStream struct {
	resp *http.Response
	rd   *bufio.Reader
}

func openEvents(t *testing.T, url, lastEventID string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	return &sseStream{resp: resp, rd: bufio.NewReader(resp.Body)}
}

// next returns the next event (skipping comments: heartbeats).
func (s *sseStream) next(t *testing.T) sse {
	t.Helper()
	var ev sse
	for {
		line, err := s.rd.ReadString('\n')
		require.NoError(t, err)
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			if ev.id != "" {
				return ev
			}
		case strings.HasPrefix(line, "id: "):
			ev.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.data))
		}
	}
}

// until reads events until one satisfies done, and returns them all.
func (s *sseStream) until(t *testing.T, done func(sse) bool) []sse {
	t.Helper()
	var out []sse
	deadline := time.AfterFunc(20*time.Second, func() { _ = s.resp.Body.Close() })
	defer deadline.Stop()
	for {
		ev := s.next(t)
		out = append(out, ev)
		if done(ev) {
			return out
		}
	}
}

func planCompleted(ev sse) bool { return ev.name == "plan" && ev.data.Status == "COMPLETED" }

// GET /v1/events streams a plan's transitions live, resumes after Last-Event-ID, beats when
// idle, and refuses bad filters naming the field.
func TestEventsStreamLiveResumeAndHeartbeat(t *testing.T) {
	t.Parallel()
	srv := servertest.With(t, server.Config{EventHeartbeat: 50 * time.Millisecond})
	all := openEvents(t, srv.URL()+"/v1/events", "")

	var sub api.Plan
	body := `{"name":"ev","maxConcurrency":2,"stages":[{"name":"one","kind":"noop"},{"name":"two","kind":"noop"}],` +
		`"tenants":[{"id":"ev-a"},{"id":"ev-b"}]}`
	require.Equal(t, http.StatusCreated, cfHTTP(t, http.MethodPost, srv.URL()+"/v1/plans", body, &sub))
	planID := sub.PlanID

	got := all.until(t, planCompleted)
	perTenant := map[string][]string{}
	for _, ev := range got {
		assert.Equal(t, ev.name, ev.data.Kind)
		assert.Equal(t, planID, ev.data.PlanID)
		if ev.data.TenantID != "" {
			perTenant[ev.data.TenantID] = append(perTenant[ev.data.TenantID], ev.name+":"+ev.data.Status)
		}
	}
	for _, tenant := range []string{"ev-a", "ev-b"} {
		assert.Equal(t, []string{"task:RUNNING", "stage:RUNNING", "stage:COMPLETED"}, perTenant[tenant], tenant)
	}

	// Resume after the first event: every later one, and none before it.
	resumed := openEvents(t, srv.URL()+"/v1/events?plan="+planID, got[0].id)
	again := resumed.until(t, planCompleted)
	require.Len(t, again, len(got)-1)
	for i, ev := range again {
		assert.Equal(t, got[i+1].id, ev.id)
	}

	// A tenant's own events only.
	one := openEvents(t, srv.URL()+"/v1/events?tenant=ev-b", "")
	ev := one.next(t)
	assert.Equal(t, "ev-b", ev.data.TenantID)

	// Nothing happens: heartbeats keep the stream alive.
	idle := openEvents(t, srv.URL()+"/v1/events?tenant=nobody", "")
	go func() { time.Sleep(300 * time.Millisecond); _ = idle.resp.Body.Close() }()
	beats := 0
	for {
		line, err := idle.rd.ReadString('\n')
		if err != nil {
			break
		}
		if strings.HasPrefix(line, ": ") {
			beats++
		}
	}
	assert.GreaterOrEqual(t, beats, 2, "heartbeats every 50 ms")

	for name, url := range map[string]string{
		"plan":   srv.URL() + "/v1/events?plan=not-a-ulid",
		"tenant": srv.URL() + "/v1/events?tenant=" + strings.Repeat("x", 200),
	} {
		resp, err := http.Get(url)
		require.NoError(t, err)
		var p api.Problem
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&p))
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, name)
		assert.Equal(t, name, p.Field)
	}
	req, err := http.NewRequest(http.MethodGet, srv.URL()+"/v1/events", nil)
	require.NoError(t, err)
	req.Header.Set("Last-Event-ID", "yesterday")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var p api.Problem
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&p))
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, "Last-Event-ID", p.Field)
}

// With --events-stream, every event the hub numbered is also in the Redis stream, in order.
func TestEventsStreamToRedis(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	srv := servertest.With(t, server.Config{RedisURL: rs.URL(), EventStream: true})
	all := openEvents(t, srv.URL()+"/v1/events", "")
	var sub api.Plan
	body := `{"name":"st","stages":[{"name":"one","kind":"noop"}],"tenants":[{"id":"st-a"}]}`
	require.Equal(t, http.StatusCreated, cfHTTP(t, http.MethodPost, srv.URL()+"/v1/plans", body, &sub))
	got := all.until(t, planCompleted)

	key := rediskey.New("").Events()
	var stored []api.Event
	require.Eventually(t, func() bool {
		entries, err := rs.Client().XRange(context.Background(), key, "-", "+").Result()
		if err != nil || len(entries) < len(got) {
			return false
		}
		stored = stored[:0]
		for _, e := range entries {
			var ev api.Event
			if json.Unmarshal([]byte(e.Values[eventstream.Field].(string)), &ev) != nil {
				return false
			}
			stored = append(stored, ev)
		}
		return true
	}, 10*time.Second, 20*time.Millisecond)
	require.Len(t, stored, len(got))
	for i, ev := range got {
		assert.Equal(t, ev.id, strconv.FormatUint(stored[i].ID, 10), "stream entry %d", i)
		assert.Equal(t, ev.data.Kind, stored[i].Kind)
		assert.Equal(t, ev.data.Status, stored[i].Status)
	}
}
