package main_test

// The acceptance of notifications (issue 36), with real processes: executors sharing a
// private redis-server, a webhook receiver in the test that checks every signature, refuses
// its first calls and de-duplicates by event id, and a kill -9 of the executor that produced
// the event.

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/notify"
	"github.com/executor-dev/executor/wire"
)

const hookSecret = "hook-e2e-0123456789abcdef"

// hook is a webhook receiver: it refuses its first refuse calls (500), then accepts; it
// counts the calls with a bad signature and what it accepted, by event id, with when.
type hook struct {
	srv    *httptest.Server
	mu     sync.Mutex
	refuse int
	calls  int
	bad    int
	events map[string][]time.Time // event id → when each accepted call came
	kinds  map[string]string      // event id → its event
}

func newHook(t *testing.T, refuse int) *hook {
	t.Helper()
	h := &hook{refuse: refuse, events: map[string][]time.Time{}, kinds: map[string]string{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		h.calls++
		if r.Header.Get(notify.HeaderSignature) != notify.Sign([]byte(hookSecret), body) {
			h.bad++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if h.calls <= h.refuse {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		id := r.Header.Get(notify.HeaderEventID)
		h.events[id] = append(h.events[id], time.Now())
		h.kinds[id] = r.Header.Get(notify.HeaderEvent)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// accepted returns, by event, how many distinct event ids were accepted.
func (h *hook) accepted() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]int{}
	for id := range h.events {
		out[h.kinds[id]]++
	}
	return out
}

// A canary plan notifies of its ring awaiting approval and of its end. The executor that
// recorded the ring's event is killed -9 at once; another one, started after, delivers it to
// a receiver that refused the first five calls; each event reaches the receiver once (after
// de-duplication by its id), every call signed.
func TestNotificationsSurviveTheirProducersKill(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	secrets := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(secrets, "hook"), []byte(hookSecret), 0o600))
	rcv := newHook(t, 5)
	flags := []string{"--secrets-dir", secrets, "--notify-backoff", "100ms"}
	a := startExecutor(t, "A", rs.URL(), append([]string{"--name", "exec-a"}, flags...)...)

	p := submitPlan(t, a, wire.PlanRequest{Name: "notified", Canary: &wire.CanaryRequest{Tenants: 1, Then: "approve"},
		Stages:  []wire.StageRequest{{Name: "noop", Kind: "noop"}},
		Tenants: []wire.TenantRequest{{ID: "nt-1"}, {ID: "nt-2"}, {ID: "nt-3"}},
		Notify:  []wire.NotifyRequest{{URL: rcv.srv.URL + "/hook", On: []string{"ring.awaiting_approval", "plan.ended"}, Secret: "hook"}},
	})
	require.Eventually(t, func() bool {
		r := a.cli(t, "plan", "show", p.PlanID, "-o", "json")
		pl := decode[wire.Plan](t, r.stdout)
		return r.code == 0 && pl.Canary != nil && pl.Canary.Phase == "AWAITING_APPROVAL"
	}, 20*time.Second, 20*time.Millisecond, "the canary never awaited approval")
	a.kill(t)
	killedAt := time.Now()
	assert.Empty(t, rcv.accepted(), "nothing accepted before the producer died (the receiver refused)")

	b := startExecutor(t, "B", rs.URL(), append([]string{"--name", "exec-b"}, flags...)...)
	require.Eventually(t, func() bool { return rcv.accepted()["ring.awaiting_approval"] == 1 }, 60*time.Second, 50*time.Millisecond,
		"the ring's notification was never delivered by the other executor")
	requireExit(t, 0, b.cli(t, "plan", "approve", p.PlanID))
	require.Eventually(t, func() bool { return rcv.accepted()["plan.ended"] == 1 }, 30*time.Second, 50*time.Millisecond)
	time.Sleep(500 * time.Millisecond) // a duplicate would come within a few polls

	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	assert.Zero(t, rcv.bad, "every call signed with the secret")
	assert.Len(t, rcv.events, 2, "one event id per event")
	for id, at := range rcv.events {
		assert.True(t, at[0].After(killedAt), "%s accepted after the producer died", id)
		t.Logf("%s (%s): accepted %d time(s)", id, rcv.kinds[id], len(at))
	}
	r := b.cli(t, "plan", "show", p.PlanID, "-o", "json")
	requireExit(t, 0, r)
	assert.Equal(t, "COMPLETED", decode[wire.Plan](t, r.stdout).Status)
}
