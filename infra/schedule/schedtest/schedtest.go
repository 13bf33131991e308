// Package schedtest is the contract test suite of the schedulers: what the orchestrator's
// Scheduler port (orchestrator.Scheduler: Schedule, Unschedule) asks of every one, with the
// due callback a started scheduler calls once for each plan whose time has come. Every
// implementation (infra/schedule's Memory and Redis) runs the same suite:
//
//	func TestContract(t *testing.T) {
//		schedtest.Run(t, func(t *testing.T) schedtest.Subject { ... })
//	}
//
// The suite only uses the port, so it must never import an implementation. Its Recorder is a
// due callback for the implementations' own tests too.
package schedtest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Scheduler starts plans at their time (orchestrator.Scheduler; repeated here so the suite
// does not depend on the orchestrator).
type Scheduler interface {
	Schedule(ctx context.Context, planID string, at time.Time) error
	Unschedule(ctx context.Context, planID string) (bool, error)
}

// RetryDelay is how long after a failed due call the suite's schedulers must call it again
// (Memory's RetryDelay, Redis's ClaimTTL): the suite's timings are made for it.
const RetryDelay = 200 * time.Millisecond

// Subject is one scheduler under test, not started.
type Subject struct {
	Scheduler Scheduler
	// Start starts the scheduler with due as its callback (called once for each plan whose
	// time has come, again after RetryDelay when it fails). newSubject stops the scheduler
	// when the test ends (t.Cleanup).
	Start func(due func(ctx context.Context, planID string) error)
	// Settle waits until the scheduler has no due call in flight or being acknowledged; nil
	// when there is nothing to wait for (a scheduler that drops an entry before calling due).
	Settle func(t *testing.T)
}

// Run runs the contract suite. newSubject is called once per subtest, possibly from parallel
// subtests, and must return a scheduler isolated from every other one it returned (a store or
// key prefix of its own), whose failed due calls are retried after RetryDelay.
func Run(t *testing.T, newSubject func(t *testing.T) Subject) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, newSubject func(t *testing.T) Subject)
	}{
		{"fires once at its time, not before", testFiresOnce},
		{"several entries fire in time order", testTimeOrder},
		{"re-scheduling moves the time", testReschedule},
		{"unschedule before the time prevents the start", testUnscheduleBefore},
		{"unschedule after the start finds nothing", testUnscheduleAfter},
		{"a failed start is retried", testRetried},
		{"an earlier entry added while waiting fires first", testEarlierEntry},
		{"an empty plan id is refused", testEmptyPlanID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, func(t *testing.T) Subject {
				t.Helper()
				s := newSubject(t)
				require.NotNil(t, s.Scheduler, "Subject.Scheduler")
				require.NotNil(t, s.Start, "Subject.Start")
				return s
			})
		})
	}
}

// start returns a started subject and its recorder.
func start(t *testing.T, newSubject func(t *testing.T) Subject) (Subject, *Recorder) {
	t.Helper()
	s, rec := newSubject(t), NewRecorder()
	s.Start(rec.Due)
	return s, rec
}

// settle waits until s has no due call in flight or being acknowledged.
func (s Subject) settle(t *testing.T) {
	t.Helper()
	if s.Settle != nil {
		s.Settle(t)
	}
}
