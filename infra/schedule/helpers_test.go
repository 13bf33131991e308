package schedule

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// scheduler is the contract both schedulers implement.
type scheduler interface {
	Start(due Due)
	Stop()
	Schedule(ctx context.Context, planID string, at time.Time) error
	Unschedule(ctx context.Context, planID string) (bool, error)
}

var (
	_ scheduler = (*Memory)(nil)
	_ scheduler = (*Redis)(nil)
)

// waitFor is the generous deadline of every Eventually: a noisy machine may stall for a
// while, a broken scheduler never gets there.
const waitFor = 10 * time.Second

// tick is the polling interval of every Eventually.
const tick = 5 * time.Millisecond

// errRefused is what a recorder's Due returns for a call it was told to fail.
var errRefused = errors.New("refused by the test")

// call is one Due call seen by a recorder.
type call struct {
	id string
	at time.Time // when Due was called
}

// recorder is a Due that records its calls and fails the ones it is told to.
type recorder struct {
	mu    sync.Mutex
	calls []call
	fail  map[string]int // plan id -> how many more calls to fail
}

func newRecorder() *recorder { return &recorder{fail: map[string]int{}} }

// due is the Due callback.
func (r *recorder) due(_ context.Context, planID string) error {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call{id: planID, at: now})
	if r.fail[planID] > 0 {
		r.fail[planID]--
		return errRefused
	}
	return nil
}

// failNext makes the next n calls for planID fail.
func (r *recorder) failNext(planID string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail[planID] = n
}

// callsOf returns the times of planID's calls.
func (r *recorder) callsOf(planID string) []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ts []time.Time
	for _, c := range r.calls {
		if c.id == planID {
			ts = append(ts, c.at)
		}
	}
	return ts
}

// count returns how many calls planID got.
func (r *recorder) count(planID string) int { return len(r.callsOf(planID)) }

// order returns the plan ids in call order.
func (r *recorder) order() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]string, 0, len(r.calls))
	for _, c := range r.calls {
		ids = append(ids, c.id)
	}
	return ids
}

// waitCalls waits until planID got n calls and returns their times.
func (r *recorder) waitCalls(t *testing.T, planID string, n int) []time.Time {
	t.Helper()
	require.Eventually(t, func() bool { return r.count(planID) >= n }, waitFor, tick,
		"%s: %d calls wanted, got %d", planID, n, r.count(planID))
	return r.callsOf(planID)
}

// testLogger logs to the test's log.
func testLogger(t testing.TB) *slog.Logger {
	t.Helper()
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// settle waits until s has no Due call in flight or being acknowledged (Redis; a Memory
// drops an entry before calling Due, so there is nothing to wait for).
func settle(t *testing.T, s scheduler) {
	t.Helper()
	r, ok := s.(*Redis)
	if !ok {
		return
	}
	require.Eventually(t, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.inflight) == 0
	}, waitFor, tick, "Due calls still in flight")
}
