package schedule

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/schedule/schedtest"
)

// scheduler is the contract both schedulers implement.
type scheduler interface {
	SetDue(due Due)
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	Schedule(ctx context.Context, planID string, at time.Time) error
	Unschedule(ctx context.Context, planID string) (bool, error)
}

var (
	_ scheduler = (*Memory)(nil)
	_ scheduler = (*Redis)(nil)
)

// startWith starts s with due.
func startWith(tb testing.TB, s scheduler, due Due) {
	tb.Helper()
	s.SetDue(due)
	require.NoError(tb, s.Start(context.Background()))
}

// stop stops s, waiting for its goroutines.
func stop(tb testing.TB, s scheduler) {
	tb.Helper()
	require.NoError(tb, s.Stop(context.Background()))
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
	}, schedtest.WaitFor, schedtest.Tick, "Due calls still in flight")
}
