package redisconn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redisconn"
)

// go-redis's lines become structured Warn records (component go-redis), one same message at
// most once per Every, the next one counting the copies dropped meanwhile.
func TestLoggerWritesGoRedisLinesStructuredAndRateLimited(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	var logs bytes.Buffer // one goroutine writes it
	l := &redisconn.Logger{
		Log:   slog.New(slog.NewJSONHandler(&logs, nil)),
		Every: 10 * time.Second,
		Now:   func() time.Time { return now },
	}
	const dial = "redis: connection pool: failed to dial after %d attempts: %v"
	ctx := context.Background()
	for range 20 { // a dead Redis: many failed dials a second
		l.Printf(ctx, dial, 1, "dial tcp 127.0.0.1:1: connect: connection refused")
	}
	l.Printf(ctx, "redis: discarding bad PubSub connection: %v", "EOF")
	now = now.Add(11 * time.Second)
	l.Printf(ctx, dial, 1, "dial tcp 127.0.0.1:1: connect: connection refused")

	var recs []map[string]any
	for line := range strings.Lines(logs.String()) {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), "one JSON record a line: %q", line)
		recs = append(recs, rec)
	}
	require.Len(t, recs, 3, logs.String())
	for _, rec := range recs {
		assert.Equal(t, "WARN", rec["level"])
		assert.Equal(t, "go-redis", rec["component"])
	}
	const msg = "redis: connection pool: failed to dial after 1 attempts: dial tcp 127.0.0.1:1: connect: connection refused"
	assert.Equal(t, msg, recs[0]["msg"])
	assert.NotContains(t, recs[0], "suppressed")
	assert.Equal(t, "redis: discarding bad PubSub connection: EOF", recs[1]["msg"])
	assert.Equal(t, msg, recs[2]["msg"])
	assert.InDelta(t, 19, recs[2]["suppressed"], 0, "the copies dropped within Every")
}
