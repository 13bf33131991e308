// Package outage tracks whether Redis is reachable: the store and the locker report Redis
// errors to one Monitor, which says whether the executor runs degraded (on memory), since
// when, and logs once per outage.
package outage

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrDataLost is returned when Redis no longer holds what this executor wrote (it restarted
// empty between two commands, with no failure seen): an outage too, so that everything is
// written back.
var ErrDataLost = errors.New("outage: redis lost data this executor wrote")

// Is reports whether err means Redis could not be reached or did not answer in time (as
// opposed to an answer: a script's refusal, a missing key, a caller's cancellation).
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
		errors.Is(err, redis.ErrClosed), errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, context.DeadlineExceeded):
		return true
	}
	var re redis.Error
	if errors.As(err, &re) {
		// Replies while Redis loads its data or is busy running a script mean: not usable now.
		return redis.HasErrorPrefix(err, "LOADING") || redis.HasErrorPrefix(err, "BUSY") ||
			redis.HasErrorPrefix(err, "MASTERDOWN") || redis.HasErrorPrefix(err, "TRYAGAIN")
	}
	return false
}

// Monitor is the executor's view of Redis: healthy, or degraded since some time.
type Monitor struct {
	log *slog.Logger
	now func() time.Time

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
	return &Monitor{log: log, now: time.Now, changed: make(chan struct{})}
}

// Degraded reports whether Redis is considered down, and since when.
func (m *Monitor) Degraded() (bool, time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.degraded, m.since
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
		m.log.Warn("redis unreachable: running degraded on memory; writes are journaled until it answers again", "err", err)
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
