package dispatch

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// dispatcher is the method set Memory and Redis share: the queue the orchestrator's port
// wraps, with their lifetimes.
type dispatcher interface {
	queue
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

var (
	_ dispatcher = (*Memory)(nil)
	_ dispatcher = (*Redis)(nil)
)

// waitFor is the generous deadline of every wait: a noisy machine may stall for a while, a
// broken queue never gets there.
const waitFor = 10 * time.Second

// tick is the polling interval of every Eventually.
const tick = 5 * time.Millisecond

// ids returns n task ids T000, T001, …
func ids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("T%03d", i)
	}
	return out
}

// claim claims one task and requires that there was one, with no wait.
func claim(t *testing.T, d dispatcher, planID, executor string) string {
	t.Helper()
	id, wait, err := d.Claim(context.Background(), planID, executor)
	require.NoError(t, err)
	require.NotEmpty(t, id, "a task to claim")
	require.Zero(t, wait)
	return id
}

// claimNone requires that Claim takes nothing and reports no wait.
func claimNone(t *testing.T, d dispatcher, planID string) {
	t.Helper()
	id, wait, err := d.Claim(context.Background(), planID, "nobody")
	require.NoError(t, err)
	require.Empty(t, id, "nothing to claim")
	require.Zero(t, wait, "no wait")
}

// claimAll claims until Claim takes nothing and returns the ids in claim order.
func claimAll(t *testing.T, d dispatcher, planID, executor string) []string {
	t.Helper()
	var got []string
	for {
		id, _, err := d.Claim(context.Background(), planID, executor)
		require.NoError(t, err)
		if id == "" {
			return got
		}
		got = append(got, id)
	}
}

// requireLen requires the plan's queued and in-flight counts.
func requireLen(t *testing.T, d dispatcher, planID string, queued, inflight int) {
	t.Helper()
	q, f, err := d.Len(context.Background(), planID)
	require.NoError(t, err)
	require.Equal(t, [2]int{queued, inflight}, [2]int{q, f}, "queued, in flight")
}

// drainWoken empties d's wake channel.
func drainWoken(d dispatcher) {
	for {
		select {
		case <-d.Woken():
		default:
			return
		}
	}
}

// requireWoken waits for a wake-up of d.
func requireWoken(t *testing.T, d dispatcher, why string) {
	t.Helper()
	select {
	case <-d.Woken():
	case <-time.After(waitFor):
		require.FailNow(t, "not woken", why)
	}
}
