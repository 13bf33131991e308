package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/auth"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// Secrets a plan and the executor's config carry; none may reach a log.
const (
	secretToken  = "op-9f8e7d6c5b4a39281706"
	secretHeader = "hdr-5a4b3c2d1e0f99887766"
	secretQuery  = "qry-0a1b2c3d4e5f66778899"
	secretUser   = "usr-pa55w0rd-11223344"
	secretParam  = "prm-aabbccddeeff00112233"
)

// postPlan submits body with the operate token and returns the response status.
func postPlan(t *testing.T, srv *server.Server, body wire.PlanRequest) int {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, srv.URL()+"/v1/plans", bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+secretToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func TestRunLogLinesNameTheirTaskAndCarryNoSecret(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable) // one retried attempt
			return
		}
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(target.Close)
	logs := &servertest.Buffer{}
	srv := servertest.With(t, server.Config{
		Tokens: []auth.Token{{Role: auth.RoleOperate, Secret: secretToken}},
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	url := strings.Replace(target.URL, "http://", "http://"+secretUser+"@", 1) + "/push?token=" + secretQuery
	require.Equal(t, http.StatusCreated, postPlan(t, srv, wire.PlanRequest{
		Name: "log-fields",
		Stages: []wire.StageRequest{
			{Name: "push", Kind: "http", Params: map[string]any{
				"method": "POST", "url": url, "headers": map[string]any{"Authorization": "Bearer " + secretHeader},
				"body": `{"key":"{{.Params.apiKey}}"}`,
			}, Retry: &wire.RetryRequest{MaxAttempts: 3, InitialBackoff: "1ms", MaxBackoff: "1ms"}},
			{Name: "settle", Kind: "noop"},
		},
		Tenants: []wire.TenantRequest{{ID: "lf-1", Params: map[string]any{"apiKey": secretParam}}},
	}))
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), `"msg":"task completed"`) },
		10*time.Second, 10*time.Millisecond)

	out := logs.String()
	for _, secret := range []string{secretToken, secretHeader, secretQuery, secretUser, secretParam} {
		assert.NotContains(t, out, secret)
	}
	seen := map[string]bool{}
	for _, rec := range servertest.JSONRecords(t, out) {
		if _, ok := rec["task_id"]; !ok {
			continue
		}
		msg, _ := rec["msg"].(string)
		seen[msg] = true
		for _, key := range []string{"plan_id", "tenant_id", "stage", "attempt"} {
			assert.Contains(t, rec, key, "run line %q names its %s", msg, key)
		}
	}
	for _, msg := range []string{"stage attempt failed; retrying", "stage completed", "task completed"} {
		assert.True(t, seen[msg], "a run line %q was logged; saw %v", msg, seen)
	}
}

func TestCRLFInANameStaysOneEscapedLogRecord(t *testing.T) {
	t.Parallel()
	const forged = `level=ERROR msg="forged record"`
	for name, handler := range map[string]func(io.Writer) slog.Handler{
		"text": func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, nil) },
		"json": func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, nil) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			logs := &servertest.Buffer{}
			srv := servertest.With(t, server.Config{
				Tokens: []auth.Token{{Role: auth.RoleOperate, Secret: secretToken}},
				Logger: slog.New(handler(logs)),
			})
			require.Equal(t, http.StatusCreated, postPlan(t, srv, wire.PlanRequest{
				Name:    "evil\r\n" + forged + "\r\n",
				Stages:  []wire.StageRequest{{Name: "one", Kind: "noop"}},
				Tenants: []wire.TenantRequest{{ID: "crlf-1"}},
			}))
			var hits []string
			for _, line := range strings.Split(logs.String(), "\n") {
				assert.False(t, strings.HasPrefix(line, "level=ERROR") || strings.HasPrefix(line, forged),
					"no log line is forged: %q", line)
				if strings.Contains(line, "forged record") {
					hits = append(hits, line)
				}
			}
			require.Len(t, hits, 1, "the name is in exactly one record:\n%s", logs.String())
			assert.Contains(t, hits[0], `operator action`)
			assert.Contains(t, hits[0], `operate`, "the record names the role that acted")
			assert.Contains(t, hits[0], `\r\n`, "CR/LF escaped inside the record")
		})
	}
}
