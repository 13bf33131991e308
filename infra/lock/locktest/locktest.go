// Package locktest is the contract test suite of the tenant lockers: what the orchestrator's
// Locker port (orchestrator.Locker) and the lease contract (domain/lease) ask of every one.
// Every implementation (infra/lock's Memory, Redis and Failover) runs the same suite:
//
//	func TestContract(t *testing.T) {
//		locktest.Run(t, func(t *testing.T, ttl time.Duration) locktest.Subject { ... })
//	}
//
// The suite only uses the domain interfaces, so it must never import an implementation.
package locktest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/lease"
)

// Locker hands out tenant leases (orchestrator.Locker; repeated here so the suite does not
// depend on the orchestrator).
type Locker interface {
	Acquire(ctx context.Context, tenantID, owner string) (lease.Lease, error)
	Holder(ctx context.Context, tenantID string) (lease.Holder, bool, error)
	ForceRelease(ctx context.Context, tenantID string) (h lease.Holder, ok bool, err error)
}

// Loss is how soon a force release makes the lease it removed lost (its Lost channel closed).
type Loss int

const (
	// LostAtOnce: by the time ForceRelease returns (an in-process lease: Memory).
	LostAtOnce Loss = iota
	// LostSoon: within a second (an in-process lease that also holds a key in a shared
	// store, which its watchdog lets go: Failover).
	LostSoon
	// LostAtRefresh: at the lease's next refresh, within a few TTLs (a lease held in a shared
	// store only: Redis).
	LostAtRefresh
)

// Subject is one locker under test.
type Subject struct {
	Locker Locker
	// Expires says that its leases expire unless refreshed: Holder reports the time left, at
	// most the TTL. Otherwise Holder's TTL is 0 (leases that never expire).
	Expires bool
	// Loss is how soon ForceRelease makes the lease it removed lost.
	Loss Loss
	// Stored, when set, reads what the locker's shared store holds for a tenant (on Redis:
	// the value of its lease key, the lease's token followed by its owner); ok is false when
	// it holds nothing. The suite checks that it agrees with Holder. Nil for a locker without
	// a shared store (Memory).
	Stored func(ctx context.Context, tenantID string) (value string, ok bool, err error)
}

// Run runs the contract suite. newSubject is called once per subtest, possibly from parallel
// subtests, and must return a locker isolated from every other one it returned (a store of
// its own, cleaned up with t.Cleanup), whose leases, when they expire, live for ttl unless
// refreshed.
func Run(t *testing.T, newSubject func(t *testing.T, ttl time.Duration) Subject) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, newSubject func(t *testing.T, ttl time.Duration) Subject)
	}{
		{"Lease/ExclusiveUntilReleased", testExclusiveUntilReleased},
		{"Lease/StaleReleaseDoesNotFreeANewerLease", testStaleRelease},
		{"Lease/ConcurrentAcquireHasOneWinner", testConcurrentAcquire},
		{"Lease/ReleaseIsIdempotent", testReleaseIsIdempotent},
		{"Lease/ConcurrentReleases", testConcurrentReleases},
		{"Lease/AfterLostRunsOnLoss", testAfterLost},
		{"Holder", testHolder},
		{"ForceRelease/UnheldTenant", testForceReleaseOfAnUnheldTenant},
		{"ForceRelease/HeldLease", testForceReleaseOfAHeldLease},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, func(t *testing.T, ttl time.Duration) Subject {
				t.Helper()
				s := newSubject(t, ttl)
				require.NotNil(t, s.Locker, "Subject.Locker")
				return s
			})
		})
	}
}

// acquire takes tenant's lease for owner and releases it when the test ends.
func (s Subject) acquire(t *testing.T, tenant, owner string) lease.Lease {
	t.Helper()
	l, err := s.Locker.Acquire(context.Background(), tenant, owner)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Release(context.Background()) })
	return l
}

// requireNotHeld checks that the locker reports tenant as not held, and that its shared
// store (if any) holds nothing for it.
func (s Subject) requireNotHeld(t *testing.T, tenant string) {
	t.Helper()
	h, held, err := s.Locker.Holder(context.Background(), tenant)
	require.NoError(t, err)
	assert.False(t, held, "held by %q", h.Owner)
	if s.Stored != nil {
		_, ok, err := s.Stored(context.Background(), tenant)
		require.NoError(t, err)
		assert.False(t, ok, "the store holds %s", tenant)
	}
}

// requireHeldBy checks that the locker reports tenant held by owner, and that its shared
// store (if any) holds it for owner.
func (s Subject) requireHeldBy(t *testing.T, tenant, owner string) {
	t.Helper()
	h, held, err := s.Locker.Holder(context.Background(), tenant)
	require.NoError(t, err)
	require.True(t, held, "tenant %s not held", tenant)
	assert.Equal(t, owner, h.Owner)
	if s.Stored != nil {
		val, ok, err := s.Stored(context.Background(), tenant)
		require.NoError(t, err, "the store's value of %s", tenant)
		require.True(t, ok, "the store holds nothing for %s", tenant)
		assert.True(t, strings.HasSuffix(val, owner), "value %q ends with %q", val, owner)
	}
}

// requireTTL checks the time left a Holder reports for a lease taken with ttl.
func (s Subject) requireTTL(t *testing.T, got, ttl time.Duration) {
	t.Helper()
	if !s.Expires {
		assert.Zero(t, got, "leases that never expire")
		return
	}
	assert.Positive(t, got)
	assert.LessOrEqual(t, got, ttl)
}

// WaitLost waits up to limit (at least 10 s) for l to be lost and returns how long it took.
func WaitLost(t *testing.T, l lease.Lease, limit time.Duration) time.Duration {
	t.Helper()
	// A floor for busy machines: how soon the loss comes is asserted (if at all) by the
	// caller on the returned duration, not by failing here.
	limit = max(limit, 10*time.Second)
	start := time.Now()
	select {
	case <-l.Lost():
		return time.Since(start)
	case <-time.After(limit):
		require.FailNow(t, "lease not lost", "waited %v", limit)
		return 0
	}
}

// RequireNotLost fails if l is lost.
func RequireNotLost(t *testing.T, l lease.Lease) {
	t.Helper()
	select {
	case <-l.Lost():
		require.FailNow(t, "lease lost")
	default:
	}
}

// requireLostNow fails unless l is lost already.
func requireLostNow(t *testing.T, l lease.Lease) {
	t.Helper()
	select {
	case <-l.Lost():
	default:
		require.FailNow(t, "lease not lost")
	}
}
