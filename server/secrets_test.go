package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// redisDump returns every value Redis holds, one string per key (its members joined).
func redisDump(t *testing.T, c *redis.Client) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	iter := c.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		key := iter.Val()
		b.WriteString(key + "=")
		switch c.Type(ctx, key).Val() {
		case "string":
			b.WriteString(c.Get(ctx, key).Val())
		case "hash":
			for f, v := range c.HGetAll(ctx, key).Val() {
				b.WriteString(f + ":" + v + ";")
			}
		case "list":
			b.WriteString(strings.Join(c.LRange(ctx, key, 0, -1).Val(), ";"))
		case "set":
			b.WriteString(strings.Join(c.SMembers(ctx, key).Val(), ";"))
		case "zset":
			b.WriteString(strings.Join(c.ZRange(ctx, key, 0, -1).Val(), ";"))
		case "stream":
			for _, m := range c.XRange(ctx, key, "-", "+").Val() {
				for f, v := range m.Values {
					b.WriteString(f + ":" + v.(string) + ";")
				}
			}
		}
		b.WriteString("\n")
	}
	require.NoError(t, iter.Err())
	return b.String()
}

// A secret read with {{secret "name"}} reaches the target, and nothing else: not Redis, not
// any answer of the API (the plan, its dry run, its tasks and their ledger, the checkpoint,
// the events), not the logs, even when the target's answer puts it in the attempt's error.
// A secret no file holds is a 400 naming the field.
func TestASecretReachesTheTargetAndNothingElse(t *testing.T) {
	t.Parallel()
	const value = "tok-7f3a9c2e-do-not-leak"
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "api-token"), []byte(value+"\n"), 0o600))
	var (
		mu    sync.Mutex
		auths []string
		calls atomic.Int64
	)
	tg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		if calls.Add(1) == 1 { // the first call fails, its answer echoing the secret
			http.Error(w, "bad token "+r.Header.Get("Authorization"), http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, `{"token":"`+r.Header.Get("Authorization")+`"}`)
	}))
	t.Cleanup(tg.Close)
	rs := redistest.Start(t)
	logs := &servertest.Buffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := newDGClient(t, servertest.With(t, server.Config{RedisURL: rs.URL(), SecretsDir: dir, Logger: logger}))

	req := wire.PlanRequest{Name: "secret", Stages: []wire.StageRequest{{Name: "deploy", Kind: "http",
		Retry:  &wire.RetryRequest{MaxAttempts: 3, InitialBackoff: "10ms"},
		Params: map[string]any{"method": "POST", "url": tg.URL + "/deploy", "headers": map[string]any{"Authorization": `Bearer {{secret "api-token"}}`}}}},
		Tenants: []wire.TenantRequest{{ID: "sec-1"}}}
	var answers strings.Builder
	read := func(method, path string, body any) {
		t.Helper()
		var raw json.RawMessage
		c.do(method, path, body, &raw)
		answers.Write(raw)
	}
	read(http.MethodPost, "/v1/plans?dryRun=true", req)
	assert.Contains(t, answers.String(), `\u003csecret api-token\u003e`, "the dry run shows where the secret goes")

	var p wire.Plan
	require.Equal(t, http.StatusCreated, c.do(http.MethodPost, "/v1/plans", req, &p).StatusCode)
	c.waitCompleted(p.PlanID)
	mu.Lock()
	assert.Equal(t, []string{"Bearer " + value, "Bearer " + value}, auths, "the target got it, on every attempt")
	mu.Unlock()

	for _, path := range []string{"/v1/plans/" + p.PlanID, "/v1/plans/" + p.PlanID + "/tasks", "/v1/tenants/sec-1/task",
		"/v1/tenants/sec-1/checkpoint"} {
		read(http.MethodGet, path, nil)
	}
	answers.WriteString(readEvents(t, c.base+"/v1/events?plan="+p.PlanID))
	assert.Contains(t, answers.String(), `bad token Bearer \u003csecret api-token\u003e`, "the failed attempt's error and the output say where it was")
	assert.NotContains(t, answers.String(), value, "no answer of the API holds the secret")
	assert.NotContains(t, redisDump(t, rs.Client()), value, "Redis does not hold the secret")
	assert.NotContains(t, logs.String(), value, "the logs do not hold the secret")

	var problem wire.Problem
	req.Stages[0].Params["headers"] = map[string]any{"Authorization": `Bearer {{secret "nope"}}`}
	require.Equal(t, http.StatusBadRequest, c.do(http.MethodPost, "/v1/plans", req, &problem).StatusCode)
	assert.Equal(t, "stages[0].params.headers.Authorization", problem.Field)
}

// readEvents reads the event stream at url for a moment (it never ends by itself), replaying
// what the executor keeps, and returns what it read.
func readEvents(t *testing.T, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Last-Event-ID", "0")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body) // ends at the timeout
	require.Contains(t, string(b), "event: ", "the stream replayed the plan's events")
	return string(b)
}
