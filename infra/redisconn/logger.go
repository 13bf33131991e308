package redisconn

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// LogEvery is how often, at most, the go-redis logger (SetLogger) writes one same message: a
// Redis that does not answer makes go-redis report every failed dial, many a second.
const LogEvery = 30 * time.Second

// logKeys bounds the distinct messages Logger remembers; past it, it forgets them all.
const logKeys = 256

// Logger is go-redis's logger (its internal Logging interface: redis.SetLogger) on slog: each
// line go-redis writes (a pool's failed dial, a cluster's or a Sentinel's failed reload…)
// becomes one structured Warn record with component "go-redis", instead of a plain text line
// in a JSON log. One same message is written at most once per Every; the next one written
// counts the copies dropped meanwhile (suppressed).
type Logger struct {
	Log   *slog.Logger
	Every time.Duration
	Now   func() time.Time // default time.Now

	mu   sync.Mutex
	seen map[string]*logSeen
}

// logSeen is when a message was last written, and how many copies were dropped since.
type logSeen struct {
	at      time.Time
	dropped int
}

// SetLogger makes go-redis log through log (see Logger), each message at most once per
// LogEvery. go-redis's logger is the process's: the last call wins.
func SetLogger(log *slog.Logger) {
	redis.SetLogger(&Logger{Log: log, Every: LogEvery})
}

// Printf writes go-redis's line, unless the same one was written less than Every ago.
func (l *Logger) Printf(ctx context.Context, format string, v ...any) {
	msg := strings.TrimSpace(fmt.Sprintf(format, v...))
	now := time.Now
	if l.Now != nil {
		now = l.Now
	}
	at := now()
	l.mu.Lock()
	if l.seen == nil || len(l.seen) >= logKeys {
		l.seen = map[string]*logSeen{}
	}
	s := l.seen[msg]
	if s != nil && at.Sub(s.at) < l.Every {
		s.dropped++
		l.mu.Unlock()
		return
	}
	dropped := 0
	if s != nil {
		dropped = s.dropped
	}
	l.seen[msg] = &logSeen{at: at}
	l.mu.Unlock()
	attrs := []any{"component", "go-redis"}
	if dropped > 0 {
		attrs = append(attrs, "suppressed", dropped)
	}
	l.Log.Log(ctx, slog.LevelWarn, msg, attrs...)
}
