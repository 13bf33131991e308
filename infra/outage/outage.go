// Package outage tracks whether Redis is reachable: the store and the locker report Redis
// errors to one Monitor, which says whether the executor runs degraded (on memory), since
// when, and logs once per outage.
package outage

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrDataLost is returned when Redis no longer holds what this executor wrote (it restarted
// empty between two commands, with no failure seen): an outage too, so that everything is
// written back.
var ErrDataLost = errors.New("outage: redis lost data this executor wrote")

// Is reports whether err means Redis could not be reached, did not answer in time, or answered
// that it cannot serve the executor now (as opposed to an answer about the data: a script's
// refusal, a missing key, a wrong type, a caller's cancellation). Outages are:
//
//   - no answer: a connection refused, reset or closed, a timeout, the pool's timeout, a
//     closed client (and ErrDataLost: Redis restarted empty);
//   - Redis unusable for now, whatever the command: OOM (maxmemory reached with the
//     noeviction policy: writes refused), READONLY (a replica, e.g. after a failover),
//     MISCONF (writes stopped after a failed snapshot), LOADING (the dataset is loading),
//     MASTERDOWN (a replica cut off its master), BUSY (a script or function runs too long),
//     TRYAGAIN (a slot being resharded), NOREPLICAS (min-replicas-to-write not met),
//     CLUSTERDOWN, and "max number of clients reached";
//   - EXECABORT: a transaction discarded because one of its commands was refused when it was
//     queued (by OOM, typically: Redis 7 refuses every command queued in a MULTI while it is
//     out of memory);
//   - Redis refusing the executor itself (see Denied): no or a wrong password (NOAUTH,
//     WRONGPASS), an ACL user lacking a key, channel or command the executor needs (NOPERM, or
//     its form inside a script), a command the executor needs unknown to the server (renamed
//     or disabled), a TLS certificate the executor does not trust.
//
// The typed errors of go-redis are matched (they survive wrapping); MISCONF and BUSY, which
// go-redis does not type, by their reply prefix (BUSY followed by a space: BUSYKEY and
// BUSYGROUP are answers about data).
func Is(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, redis.Nil) {
		return false
	}
	if errors.Is(err, ErrDataLost) {
		return true
	}
	var netErr net.Error
	switch {
	case errors.As(err, &netErr), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, redis.ErrClosed), errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, redis.ErrPoolExhausted),
		errors.Is(err, context.DeadlineExceeded):
		return true
	}
	return refused(err)
}

// refused reports whether err is a reply by which Redis refuses to serve any command of its
// kind for now (out of memory, read-only, loading, …: see Is) or refuses the executor itself
// (Denied), as opposed to a reply about the command or its data.
func refused(err error) bool {
	if Denied(err) {
		return true
	}
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	return redis.IsOOMError(err) || redis.IsExecAbortError(err) || redis.IsReadOnlyError(err) ||
		redis.IsLoadingError(err) || redis.IsMasterDownError(err) || redis.IsTryAgainError(err) ||
		redis.IsNoReplicasError(err) || redis.IsClusterDownError(err) || redis.IsMaxClientsError(err) ||
		redis.HasErrorPrefix(err, "MISCONF ") || redis.HasErrorPrefix(err, "BUSY ")
}

// Denied reports whether err is Redis refusing the executor itself, whatever the moment: an
// outage that only a change of configuration (of Redis, of its ACL, of --redis or of the
// trusted CAs) ends, as opposed to one that ends by itself (a restart, memory freed). These
// are:
//
//   - NOAUTH (a Redis with requirepass or ACL users, reached without a password) and
//     WRONGPASS (a wrong user or password, or a disabled user);
//   - NOPERM: the ACL user may not run a command, or not on a key or channel; inside a Lua
//     script Redis 7.0 answers "ERR The user executing the script can't …" instead;
//   - an unknown command ("ERR unknown command 'TIME'", "ERR Unknown Redis command called
//     from script"): the executor sends only commands it needs, so one the server does not
//     know was renamed or disabled (rename-command);
//   - a TLS handshake refused on this side: a server certificate the executor does not trust
//     (an unknown authority, expired, for another host), or a server that does not speak TLS
//     on a rediss:// address.
func Denied(err error) bool {
	if err == nil {
		return false
	}
	var (
		verify    *tls.CertificateVerificationError
		authority x509.UnknownAuthorityError
		invalid   x509.CertificateInvalidError
		host      x509.HostnameError
		record    tls.RecordHeaderError
	)
	if errors.As(err, &verify) || errors.As(err, &authority) || errors.As(err, &invalid) ||
		errors.As(err, &host) || errors.As(err, &record) {
		return true
	}
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	return redis.IsAuthError(err) || redis.IsPermissionError(err) ||
		redis.HasErrorPrefix(err, "unknown command ") || redis.HasErrorPrefix(err, "Unknown Redis command called from script") ||
		redis.HasErrorPrefix(err, "The user executing the script can't ")
}

// Monitor is the executor's view of Redis: healthy, or degraded since some time.
type Monitor struct {
	log  *slog.Logger
	now  func() time.Time
	down string // what an outage means, logged at its start (Shared)

	mu       sync.Mutex
	degraded bool
	since    time.Time
	cause    error
	changed  chan struct{} // closed (and replaced) at every change
}

// NewMonitor returns a healthy monitor.
func NewMonitor(log *slog.Logger) *Monitor {
	if log == nil {
		log = slog.Default()
	}
	return &Monitor{log: log, now: time.Now, changed: make(chan struct{}),
		down: "redis unavailable: running degraded on memory; writes are journaled until it serves again"}
}

// Shared makes m the monitor of an executor that shares its Redis (the `shared` topology),
// where an outage is not run on memory: it logs what it means there. It returns m.
func (m *Monitor) Shared() *Monitor {
	m.down = "redis unavailable, or slower than the client timeout: runs wait for it; nothing is written on memory alone"
	return m
}

// Degraded reports whether Redis is considered down, and since when.
func (m *Monitor) Degraded() (bool, time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.degraded, m.since
}

// Reason returns why the executor runs degraded: the text of the error that began the current
// outage (e.g. "redisrepo: save task: OOM command not allowed when used memory >
// 'maxmemory'."); "" while Redis is healthy.
func (m *Monitor) Reason() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cause == nil {
		return ""
	}
	return m.cause.Error()
}

// Cause returns the error that began the current outage (nil while Redis is healthy), for
// callers that match it (errors.Is, redis.IsOOMError).
func (m *Monitor) Cause() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cause
}

// Fail records err if it is an outage (see Is) and reports whether it was one. The first
// failure of an outage switches to degraded and is logged; later ones are not.
func (m *Monitor) Fail(err error) bool {
	if !Is(err) {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.degraded {
		m.degraded, m.since, m.cause = true, m.now().UTC(), err
		m.log.Warn(m.down, "reason", kind(err), "err", err)
		m.signal()
	}
	return true
}

// Recover records that Redis answers again and everything journaled was written back.
func (m *Monitor) Recover() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.degraded {
		m.log.Info("redis answers again: degraded mode over", "outage", m.now().Sub(m.since).Round(time.Millisecond).String())
		m.degraded, m.since, m.cause = false, time.Time{}, nil
		m.signal()
	}
}

// Changed returns a channel closed at the next switch between healthy and degraded.
func (m *Monitor) Changed() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.changed
}

func (m *Monitor) signal() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// kind names what made Redis unavailable, for the log: "unreachable" (no answer in time, a
// closed or refused connection), "data lost" (it restarted empty), "TLS" (a certificate not
// trusted), "unknown command" (renamed or disabled), or the refusal's reply prefix (OOM,
// READONLY, LOADING, NOAUTH, WRONGPASS, NOPERM, ...).
func kind(err error) string {
	var re redis.Error
	switch {
	case errors.Is(err, ErrDataLost):
		return "data lost"
	case Denied(err) && !errors.As(err, &re):
		return "TLS"
	case redis.HasErrorPrefix(err, "unknown command ") || redis.HasErrorPrefix(err, "Unknown Redis command"):
		return "unknown command"
	case redis.HasErrorPrefix(err, "The user executing the script can't "):
		return "NOPERM"
	case errors.As(err, &re) && refused(err):
		msg := strings.TrimPrefix(re.Error(), "ERR ")
		if i := strings.IndexByte(msg, ' '); i > 0 {
			return msg[:i]
		}
		return msg
	default:
		return "unreachable"
	}
}
