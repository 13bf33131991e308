package locktest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/lease"
)

// forceTTL is the lease TTL of the force-release cases: a refresh every 200ms, so a Redis
// lease finds its key gone soon.
const forceTTL = 600 * time.Millisecond

func testForceReleaseOfAnUnheldTenant(t *testing.T, newSubject func(*testing.T, time.Duration) Subject) {
	setups := []struct {
		name  string
		setup func(t *testing.T, s Subject)
	}{
		{name: "never held", setup: func(*testing.T, Subject) {}},
		{
			name: "released",
			setup: func(t *testing.T, s Subject) {
				require.NoError(t, s.acquire(t, "t1", "plan-1:task-a").Release(context.Background()))
			},
		},
		{
			name: "another tenant held",
			setup: func(t *testing.T, s Subject) {
				s.acquire(t, "t2", "plan-1:task-a")
			},
		},
	}
	for _, st := range setups {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			s := newSubject(t, forceTTL)
			st.setup(t, s)

			h, ok, err := s.Locker.ForceRelease(context.Background(), "t1")
			require.NoError(t, err)
			assert.False(t, ok)
			assert.Equal(t, lease.Holder{}, h)
			s.requireNotHeld(t, "t1")
			if st.name == "another tenant held" {
				s.requireHeldBy(t, "t2", "plan-1:task-a")
			}
		})
	}
}

func testForceReleaseOfAHeldLease(t *testing.T, newSubject func(*testing.T, time.Duration) Subject) {
	variants := []struct {
		name string
		ttl  time.Duration
		// seeLoss: wait for the old lease to be lost before its Release. Otherwise the TTL
		// is long enough for a Redis lease to be released before its next refresh.
		seeLoss bool
	}{
		{name: "release after the loss", ttl: forceTTL, seeLoss: true},
		{name: "release before the loss is seen", ttl: 6 * time.Second},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			s := newSubject(t, v.ttl)
			old := s.acquire(t, "t1", "plan-1:task-a")
			other := s.acquire(t, "t2", "plan-1:task-c")
			RequireNotLost(t, old)
			s.forceReleaseHeld(t, old, v.ttl)

			next := s.acquire(t, "t1", "plan-2:task-b")
			if v.seeLoss {
				took := WaitLost(t, old, 5*v.ttl)
				t.Logf("lost %v after the new Acquire (TTL %v)", took, v.ttl)
			}
			ctx := context.Background()
			require.NoError(t, old.Release(ctx), "releasing a force-released lease is not an error")
			require.NoError(t, old.Release(ctx))
			s.requireHeldBy(t, "t1", "plan-2:task-b") // the old token no longer matches
			RequireNotLost(t, next)
			RequireNotLost(t, other)
			s.requireHeldBy(t, "t2", "plan-1:task-c")

			require.NoError(t, next.Release(ctx))
			s.requireNotHeld(t, "t1")
		})
	}
}

// forceReleaseHeld force-releases tenant t1, whose lease old (of plan-1:task-a, taken with
// ttl) is held, and checks what it did: the holder it reports, the loss of old, the tenant
// free, nothing left to release.
func (s Subject) forceReleaseHeld(t *testing.T, old lease.Lease, ttl time.Duration) {
	t.Helper()
	ctx := context.Background()
	h, ok, err := s.Locker.ForceRelease(ctx, "t1")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "plan-1:task-a", h.Owner)
	s.requireTTL(t, h.TTL, ttl)
	switch s.Loss {
	case LostAtOnce:
		requireLostNow(t, old)
	case LostSoon:
		WaitLost(t, old, time.Second) // at once, give or take the watchdog's wake-up
	}
	s.requireNotHeld(t, "t1")
	if s.Loss != LostAtRefresh && s.Stored != nil {
		time.Sleep(ttl / 2) // past a watchdog tick, in case one were still running
		s.requireNotHeld(t, "t1")
	}
	_, ok, err = s.Locker.ForceRelease(ctx, "t1")
	require.NoError(t, err)
	assert.False(t, ok, "nothing left to release")
}
