package schedtest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// WaitFor is the generous deadline of every Eventually: a noisy machine may stall for a
// while, a broken scheduler never gets there.
const WaitFor = 10 * time.Second

// Tick is the polling interval of every Eventually.
const Tick = 5 * time.Millisecond

// ErrRefused is what a Recorder's Due returns for a call it was told to fail.
var ErrRefused = errors.New("schedtest: refused by the test")

// call is one Due call seen by a Recorder.
type call struct {
	id string
	at time.Time // when Due was called
}

// Recorder is a due callback that records its calls and fails the ones it is told to.
type Recorder struct {
	mu    sync.Mutex
	calls []call
	fail  map[string]int // plan id -> how many more calls to fail
}

// NewRecorder returns a Recorder that has seen no call.
func NewRecorder() *Recorder { return &Recorder{fail: map[string]int{}} }

// Due is the due callback: it records the call, and fails it (ErrRefused) when told to.
func (r *Recorder) Due(_ context.Context, planID string) error {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call{id: planID, at: now})
	if r.fail[planID] > 0 {
		r.fail[planID]--
		return ErrRefused
	}
	return nil
}

// FailNext makes the next n calls for planID fail.
func (r *Recorder) FailNext(planID string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail[planID] = n
}

// CallsOf returns the times of planID's calls.
func (r *Recorder) CallsOf(planID string) []time.Time {
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

// Count returns how many calls planID got.
func (r *Recorder) Count(planID string) int { return len(r.CallsOf(planID)) }

// Order returns the plan ids in call order.
func (r *Recorder) Order() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]string, 0, len(r.calls))
	for _, c := range r.calls {
		ids = append(ids, c.id)
	}
	return ids
}

// WaitCalls waits until planID got n calls (at most WaitFor) and returns their times.
func (r *Recorder) WaitCalls(t *testing.T, planID string, n int) []time.Time {
	t.Helper()
	require.Eventually(t, func() bool { return r.Count(planID) >= n }, WaitFor, Tick,
		"%s: %d calls wanted, got %d", planID, n, r.Count(planID))
	return r.CallsOf(planID)
}
