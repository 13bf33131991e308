package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/events"
	"github.com/executor-dev/executor/infra/eventstream"
	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
)

// streamID is the form of a Redis stream entry ID.
var streamID = regexp.MustCompile(`^\d+-\d+(-\d+)?$`)

// On Redis, GET /v1/events serves the cluster's stream: a plan run by executor A is seen on
// B, with the stream entries' IDs, and B resumes after an ID A sent with no gap and nothing
// twice.
func TestEventsAreTheClusters(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	a := servertest.With(t, server.Config{RedisURL: rs.URL()})
	b := servertest.With(t, server.Config{RedisURL: rs.URL()})
	onA := openEvents(t, a.URL()+"/v1/events", "")
	onB := openEvents(t, b.URL()+"/v1/events", "")

	planID := submitNoop(t, a.URL(), "cl-a")
	gotA := onA.until(t, planCompleted)
	gotB := onB.until(t, planCompleted)
	require.Equal(t, sseIDs(gotA), sseIDs(gotB), "both executors serve the same entries")
	for _, ev := range gotB {
		assert.Regexp(t, streamID, ev.id)
		assert.Equal(t, ev.id, ev.data.ID, "the data's id is the entry's")
		assert.Equal(t, planID, ev.data.PlanID)
	}
	entries, err := rs.Client().XRange(context.Background(), rediskey.New("").Events(), "-", "+").Result()
	require.NoError(t, err)
	var stored []string // an entry's events: its ID, then its ID with their index
	for _, e := range entries {
		var batch []json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(e.Values[eventstream.FieldBatch].(string)), &batch))
		for i := range batch {
			if i == 0 {
				stored = append(stored, e.ID)
			} else {
				stored = append(stored, fmt.Sprintf("%s-%d", e.ID, i))
			}
		}
	}
	assert.Equal(t, stored, sseIDs(gotB), "the ids are the stream's")

	// Resume on B after A's first event: every later one once, no gap.
	resumed := openEvents(t, b.URL()+"/v1/events?plan="+planID, gotA[0].id)
	again := resumed.until(t, planCompleted)
	require.Equal(t, sseIDs(gotA[1:]), sseIDs(again))

	// A new connection gets nothing old: the next plan's events first.
	fresh := openEvents(t, b.URL()+"/v1/events", "")
	next := submitNoop(t, a.URL(), "cl-b")
	for _, ev := range fresh.until(t, planCompleted) {
		require.Equal(t, next, ev.data.PlanID)
	}

	// A stream ID is not a hub's number, nor the reverse: a malformed one is a 400.
	resp := getWithLastEventID(t, b.URL()+"/v1/events", "12-x")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
}

// An ID older than the (trimmed) stream's first entry starts with event: gap, then the
// entries the stream keeps.
func TestEventsGapWhenTheStreamWasTrimmed(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	srv := servertest.With(t, server.Config{RedisURL: rs.URL(), EventStreamMaxLen: 10})
	live := openEvents(t, srv.URL()+"/v1/events", "")
	old := submitNoop(t, srv.URL(), "gap-0")
	first := live.until(t, planCompleted)[0].id

	// Another executor's events fill the stream: Redis trims whole nodes of 100 entries.
	client := rs.Client()
	for range 300 {
		require.NoError(t, client.XAdd(context.Background(), &redis.XAddArgs{
			Stream: rediskey.New("").Events(), MaxLen: 10, Approx: true,
			Values: []any{eventstream.Field, `{"id":1,"kind":"plan","planId":"01KAAAAAAAAAAAAAAAAAAAAAAA","status":"RUNNING"}`},
		}).Err())
	}
	head, err := client.XRangeN(context.Background(), rediskey.New("").Events(), "-", "+", 1).Result()
	require.NoError(t, err)
	require.Positive(t, events.CompareIDs(head[0].ID, first), "the entry was trimmed")

	stream := openEvents(t, srv.URL()+"/v1/events?plan="+old, first)
	assert.Equal(t, "gap", stream.next(t).name)
}

// A restarted executor (or another one) resumes after an ID sent before the restart.
func TestEventsIDsSurviveARestart(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	cfg := server.Config{RedisURL: rs.URL(), Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler), ShutdownTimeout: time.Millisecond}
	a, err := server.New(cfg)
	require.NoError(t, err)
	require.NoError(t, a.Start(context.Background()))
	live := openEvents(t, a.URL()+"/v1/events", "")
	submitNoop(t, a.URL(), "rs-a")
	last := live.until(t, planCompleted)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, a.Stop(ctx))

	b := servertest.With(t, server.Config{RedisURL: rs.URL()})
	after := submitNoop(t, b.URL(), "rs-b")
	waitPlan(t, b.URL(), after)

	again := servertest.With(t, server.Config{RedisURL: rs.URL()})
	resumed := openEvents(t, again.URL()+"/v1/events", last[len(last)-1].id)
	got := resumed.until(t, planCompleted)
	require.NotEqual(t, "gap", got[0].name)
	for _, ev := range got {
		require.Equal(t, after, ev.data.PlanID, "what came after the ID, and nothing before")
	}
}

func sseIDs(evs []sse) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.id
	}
	return out
}

func getWithLastEventID(t *testing.T, url, id string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Last-Event-ID", id)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	var p struct{ Field string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&p))
	assert.Equal(t, "Last-Event-ID", p.Field)
	return resp
}

// waitPlan waits until the plan has ended.
func waitPlan(t *testing.T, url, planID string) {
	t.Helper()
	require.Eventually(t, func() bool {
		var p struct{ Status string }
		code := cfHTTP(t, http.MethodGet, url+"/v1/plans/"+planID, "", &p)
		return code == http.StatusOK && strings.HasSuffix(p.Status, "COMPLETED")
	}, 20*time.Second, 20*time.Millisecond)
}
