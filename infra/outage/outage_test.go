package outage_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/outage"
)

func TestIsTellsOutagesFromAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"refused", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true},
		{"wrapped refused", fmt.Errorf("redisrepo: save task: %w", syscall.ECONNREFUSED), true},
		{"eof", io.EOF, true},
		{"timeout", context.DeadlineExceeded, true},
		{"pool timeout", redis.ErrPoolTimeout, true},
		{"key missing", redis.Nil, false},
		{"caller gave up", context.Canceled, false},
		{"plain error", errors.New("fenced"), false},
		{"data lost", fmt.Errorf("redisrepo: task T: %w", outage.ErrDataLost), true},
		{"pool exhausted", redis.ErrPoolExhausted, true},
		{"closed client", redis.ErrClosed, true},
		{"untrusted certificate", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, true},
		{"certificate for another host", fmt.Errorf("dial: %w", x509.HostnameError{Certificate: &x509.Certificate{}, Host: "redis"}), true},
		{"expired certificate", x509.CertificateInvalidError{Reason: x509.Expired}, true},
		{"no TLS on the port", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, true},
		{"a text that looks like a refusal", errors.New("NOPERM but not a reply"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, outage.Is(tc.err))
		})
	}
}

func TestMonitorSwitchesOncePerOutage(t *testing.T) {
	t.Parallel()
	m := outage.NewMonitor(slog.New(slog.DiscardHandler))
	down, _ := m.Degraded()
	assert.False(t, down)
	assert.Empty(t, m.Reason(), "healthy: no reason")
	assert.NoError(t, m.Cause())

	changed := m.Changed()
	assert.False(t, m.Fail(errors.New("not an outage")))
	cause := fmt.Errorf("redisrepo: save task: %w", io.EOF)
	assert.True(t, m.Fail(cause))
	down, since := m.Degraded()
	assert.True(t, down)
	assert.False(t, since.IsZero())
	assert.Equal(t, "redisrepo: save task: EOF", m.Reason())
	require.ErrorIs(t, m.Cause(), io.EOF)
	<-changed // closed by the switch

	again := m.Changed()
	assert.True(t, m.Fail(context.DeadlineExceeded))
	_, since2 := m.Degraded()
	assert.Equal(t, since, since2, "one outage, one start")
	assert.Equal(t, "redisrepo: save task: EOF", m.Reason(), "the outage's reason is what began it")
	select {
	case <-again:
		t.Fatal("a second failure is not a change")
	default:
	}

	m.Recover()
	<-again
	down, _ = m.Degraded()
	assert.False(t, down)
	assert.Empty(t, m.Reason(), "recovered: no reason")
	assert.NoError(t, m.Cause())
}

func TestMonitorLogsWhatAnOutageMeansForItsTopology(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		shared bool
		says   string
	}{
		{name: "alone", shared: false, says: "writes are journaled until it serves again"},
		{name: "shared", shared: true, says: "nothing is written on memory alone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs strings.Builder
			m := outage.NewMonitor(slog.New(slog.NewTextHandler(&logs, nil)))
			if tt.shared {
				require.Same(t, m, m.Shared())
			}
			require.True(t, m.Fail(io.EOF))
			assert.Contains(t, logs.String(), tt.says)
			assert.Equal(t, 1, strings.Count(logs.String(), "redis unavailable"), "once per outage")
		})
	}
}
