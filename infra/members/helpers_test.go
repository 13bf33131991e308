package members_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/members"
)

// ttl is the liveness TTL of the tests: short, so expiries come quickly.
const ttl = 600 * time.Millisecond

// waitFor is the deadline of every Eventually: a busy machine may stall, a broken registry
// never gets there.
const waitFor = 10 * time.Second

// tick is the polling interval of every Eventually.
const tick = 10 * time.Millisecond

// logs is a logger's output, safe to read while it is written.
type logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// count returns how many lines hold s.
func (l *logs) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.buf.String(), s)
}

func (l *logs) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// newRedis returns a registry of name on client, not started, stopped when the test ends.
func newRedis(t *testing.T, client redis.UniversalClient, name string, opts members.Options) *members.Redis {
	t.Helper()
	opts.Name = name
	if opts.TTL == 0 {
		opts.TTL = ttl
	}
	if opts.Address == "" {
		opts.Address = "127.0.0.1:80"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	r, err := members.NewRedis(client, opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = r.Stop(ctx)
	})
	return r
}

// startRedis returns a started registry of name on client (see newRedis).
func startRedis(t *testing.T, client redis.UniversalClient, name string, opts members.Options) *members.Redis {
	t.Helper()
	r := newRedis(t, client, name, opts)
	require.NoError(t, r.Start(context.Background()))
	return r
}

// byName returns the members listed by r, by name.
func byName(t *testing.T, r interface {
	List(context.Context) ([]members.Member, error)
}) map[string]members.Member {
	t.Helper()
	list, err := r.List(context.Background())
	require.NoError(t, err)
	out := map[string]members.Member{}
	for _, m := range list {
		out[m.Name] = m
	}
	return out
}

// requireAlive waits until r lists name with alive == want.
func requireAlive(t *testing.T, r *members.Redis, name string, want bool) {
	t.Helper()
	require.Eventually(t, func() bool {
		m, ok := byName(t, r)[name]
		return ok && m.Alive == want
	}, waitFor, tick, "%s alive=%v wanted", name, want)
}

// assertNames checks which names a list holds, in order.
func assertNames(t *testing.T, want []string, list []members.Member) {
	t.Helper()
	got := make([]string, len(list))
	for i, m := range list {
		got[i] = m.Name
	}
	assert.Equal(t, want, got)
}
