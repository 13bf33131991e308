package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/api"
	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/wire"
)

// fakeMembers is a member registry answering list or err.
type fakeMembers struct {
	name string
	list []app.Member
	err  error
}

func (f fakeMembers) Name() string { return f.name }

func (f fakeMembers) Members(context.Context) ([]app.Member, error) { return f.list, f.err }

func TestExecutorsRoute(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		deps   app.Deps
		status int
		want   string
	}{
		{
			name: "sorted by name, self marked",
			deps: app.Deps{Members: fakeMembers{name: "exec-b", list: []app.Member{
				{Name: "exec-c", Address: "c:1", StartedAt: at, LastHeartbeat: at.Add(time.Minute), Alive: false},
				{Name: "exec-b", Address: "b:1", Version: "v1.0.0", StartedAt: at, LastHeartbeat: at.Add(time.Second), Runs: 4, Alive: true},
				{Name: "exec-a", Address: "a:1", StartedAt: at, LastHeartbeat: at, Runs: 1, Alive: true},
			}}},
			status: http.StatusOK,
			want: `{"executors":[
				{"name":"exec-a","address":"a:1","startedAt":"2025-03-01T12:00:00Z","lastHeartbeat":"2025-03-01T12:00:00Z","runs":1,"alive":true,"self":false},
				{"name":"exec-b","address":"b:1","version":"v1.0.0","startedAt":"2025-03-01T12:00:00Z","lastHeartbeat":"2025-03-01T12:00:01Z","runs":4,"alive":true,"self":true},
				{"name":"exec-c","address":"c:1","startedAt":"2025-03-01T12:00:00Z","lastHeartbeat":"2025-03-01T12:01:00Z","runs":0,"alive":false,"self":false}]}`,
		},
		{name: "no registry", deps: app.Deps{}, status: http.StatusOK, want: `{"executors":[]}`},
		{name: "empty registry", deps: app.Deps{Members: fakeMembers{name: "x"}}, status: http.StatusOK, want: `{"executors":[]}`},
		{
			name:   "registry unreachable",
			deps:   app.Deps{Members: fakeMembers{name: "x", err: errors.New("members: list: dial tcp: connection refused")}},
			status: http.StatusServiceUnavailable,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := api.NewRouter(app.New(tc.deps), api.Options{Logger: slog.New(slog.DiscardHandler), Name: "x"})
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/executors", nil))
			require.Equal(t, tc.status, rec.Code, rec.Body.String())
			if tc.status != http.StatusOK {
				var p wire.Problem
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
				assert.Equal(t, wire.ProblemUnavailable, p.Type)
				assert.NotContains(t, p.Detail, "connection refused", "Redis's error stays in the log")
				return
			}
			assert.JSONEq(t, tc.want, rec.Body.String())
		})
	}
}
