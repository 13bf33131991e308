package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// sse is one server-sent event as read off the wire.
type sse struct {
	id, name string
	data     wire.Event
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
			if ev.id != "" || ev.name != "" { // a gap has a name and no id
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

	var sub wire.Plan
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

	// A tenant's own events only, from the oldest kept.
	one := openEvents(t, srv.URL()+"/v1/events?tenant=ev-b", "0")
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
		var p wire.Problem
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
	var p wire.Problem
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&p))
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, "Last-Event-ID", p.Field)
}

// A connection without Last-Event-ID gets new events only, not the ones kept.
func TestEventsWithoutLastEventIDAreNewOnly(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	first := submitNoop(t, srv.URL(), "old")
	openEvents(t, srv.URL()+"/v1/events?plan="+first, "0").until(t, planCompleted)

	fresh := openEvents(t, srv.URL()+"/v1/events", "")
	second := submitNoop(t, srv.URL(), "new")
	for _, ev := range fresh.until(t, planCompleted) {
		require.Equal(t, second, ev.data.PlanID, "nothing of the plan that ended before the connection")
	}
}

// submitNoop submits a plan of one noop stage for tenant and returns its id.
func submitNoop(t *testing.T, url, tenant string) string {
	t.Helper()
	var sub wire.Plan
	body := `{"name":"ev","stages":[{"name":"one","kind":"noop"}],"tenants":[{"id":"` + tenant + `"}]}`
	require.Equal(t, http.StatusCreated, cfHTTP(t, http.MethodPost, url+"/v1/plans", body, &sub))
	return sub.PlanID
}
