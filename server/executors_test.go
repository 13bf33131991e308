package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/members"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// listExecutors calls GET /v1/executors on srv.
func listExecutors(t *testing.T, srv *server.Server) wire.ExecutorList {
	t.Helper()
	resp, err := http.Get(srv.URL() + "/v1/executors")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var l wire.ExecutorList
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&l))
	return l
}

// names returns the listed executors' names, and the one marked self.
func names(l wire.ExecutorList) (all []string, self string) {
	for _, e := range l.Executors {
		all = append(all, e.Name)
		if e.Self {
			self = e.Name
		}
	}
	return all, self
}

// Two executors on one Redis list each other by name; once one stopped, the other lists
// itself alone.
func TestExecutorsListEachOther(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	ttl := time.Second
	a := servertest.With(t, server.Config{RedisURL: rs.URL(), LeaseTTL: ttl, Name: "exec-a"})
	b, err := server.New(server.Config{Addr: "127.0.0.1:0", RedisURL: rs.URL(), LeaseTTL: ttl, Name: "exec-b",
		ShutdownTimeout: time.Millisecond})
	require.NoError(t, err)
	require.NoError(t, b.Start(context.Background()))
	var stopOnce sync.Once
	stopB := func() {
		stopOnce.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			assert.NoError(t, b.Stop(ctx))
		})
	}
	t.Cleanup(stopB)

	for _, srv := range []*server.Server{a, b} {
		l := listExecutors(t, srv)
		all, self := names(l)
		assert.Equal(t, []string{"exec-a", "exec-b"}, all)
		assert.Equal(t, srv.Name(), self)
		for _, e := range l.Executors {
			assert.True(t, e.Alive, e.Name)
			assert.NotEmpty(t, e.Address, e.Name)
			assert.False(t, e.StartedAt.IsZero(), e.Name)
		}
	}
	assert.Equal(t, b.Addr(), listExecutors(t, a).Executors[1].Address, "the address it serves at")

	stopB()
	require.Eventually(t, func() bool {
		all, self := names(listExecutors(t, a))
		return assert.ObjectsAreEqual([]string{"exec-a"}, all) && self == "exec-a"
	}, 10*time.Second, 20*time.Millisecond)
}

// A second executor with the name of a live one on the same Redis refuses to start.
func TestExecutorsRefuseADuplicateName(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	servertest.With(t, server.Config{RedisURL: rs.URL(), Name: "twin"})
	dup, err := server.New(server.Config{Addr: "127.0.0.1:0", RedisURL: rs.URL(), Name: "twin"})
	require.NoError(t, err)
	err = dup.Start(context.Background())
	require.ErrorIs(t, err, members.ErrNameInUse)
	assert.Contains(t, err.Error(), `"twin"`)
	t.Cleanup(func() { _ = dup.Redis().Close() })
}

// On the in-memory store the executor lists itself; every log line names it.
func TestExecutorsOnMemoryListItself(t *testing.T) {
	t.Parallel()
	logs := &servertest.Buffer{}
	srv := servertest.With(t, server.Config{Name: "solo-1", Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	l := listExecutors(t, srv)
	require.Len(t, l.Executors, 1)
	e := l.Executors[0]
	assert.Equal(t, "solo-1", e.Name)
	assert.True(t, e.Alive)
	assert.True(t, e.Self)
	assert.Equal(t, srv.Addr(), e.Address)

	records := servertest.JSONRecords(t, logs.String())
	require.NotEmpty(t, records)
	for _, rec := range records {
		assert.Equal(t, "solo-1", rec["executor"], "%v", rec)
	}
}

func TestExecutorsBadName(t *testing.T) {
	t.Parallel()
	_, err := server.New(server.Config{Name: "a{b}"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--name")
}
