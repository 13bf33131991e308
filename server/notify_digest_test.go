package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/notify"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// A 10,000-tenant plan whose first ring halts on its failures sends a handful of
// notifications, not one per tenant: one ring.halted naming the failures counted with a
// sample, then, once rejected, one plan.ended; GET /v1/plans/{id}/notifications shows them
// delivered.
func TestAHaltedRingOfTenThousandTenantsIsOneNotification(t *testing.T) {
	t.Parallel()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	t.Cleanup(failing.Close)
	var mu sync.Mutex
	var got []notify.Message
	rcv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		var m notify.Message
		b, _ := io.ReadAll(r.Body)
		if json.Unmarshal(b, &m) == nil {
			mu.Lock()
			got = append(got, m)
			mu.Unlock()
		}
	}))
	t.Cleanup(rcv.Close)
	received := func() []notify.Message {
		mu.Lock()
		defer mu.Unlock()
		return append([]notify.Message(nil), got...)
	}

	srv := servertest.Start(t)
	const n = 10000
	ts := make([]string, n)
	for i := range ts {
		ts[i] = fmt.Sprintf(`{"id":"nd-%05d"}`, i)
	}
	body := fmt.Sprintf(`{"name":"big","maxConcurrency":50,`+
		`"stages":[{"name":"deploy","kind":"http","retry":{"maxAttempts":1},"params":{"method":"POST","url":%q}}],`+
		`"waves":[{"name":"first","size":"10%%","failureBudget":"1%%"},{"name":"rest","size":"rest"}],`+
		`"notify":[{"url":%q,"on":["plan.ended","plan.paused","ring.halted","ring.awaiting_approval","gate.waiting","budget.crossed","rollback.*"]}],`+
		`"tenants":[%s]}`, failing.URL+"/deploy", rcv.URL+"/hook", strings.Join(ts, ","))
	var p wire.Plan
	require.Equal(t, http.StatusCreated, cfHTTP(t, http.MethodPost, srv.URL()+"/v1/plans", body, &p))

	eventuallyRing(t, srv, p.PlanID, 0, "halted")
	require.Eventually(t, func() bool { return len(received()) >= 1 }, 20*time.Second, 20*time.Millisecond)
	require.Equal(t, http.StatusOK, cfHTTP(t, http.MethodPost, srv.URL()+"/v1/plans/"+p.PlanID+"/reject", "", nil))
	require.Eventually(t, func() bool {
		for _, m := range received() {
			if m.Event == "plan.ended" {
				return true
			}
		}
		return false
	}, 30*time.Second, 20*time.Millisecond)
	time.Sleep(1500 * time.Millisecond) // anything more would come within the next polls

	msgs := received()
	events := make([]string, len(msgs))
	for i, m := range msgs {
		events[i] = m.Event
	}
	assert.Equal(t, []string{"ring.halted", "plan.ended"}, events, "a handful, not one per tenant")
	halted := msgs[0]
	assert.Equal(t, n, halted.Total)
	assert.Equal(t, "first", halted.RingName)
	assert.GreaterOrEqual(t, halted.Counts["FAILED"], 10, "the failures that crossed the 1%% budget are counted")
	require.NotEmpty(t, halted.Samples)
	assert.Contains(t, halted.Samples[0].Tenant, "nd-")

	var list wire.NotificationList
	require.Equal(t, http.StatusOK, cfHTTP(t, http.MethodGet, srv.URL()+"/v1/plans/"+p.PlanID+"/notifications", "", &list))
	require.Len(t, list.Notifications, 2)
	for _, nt := range list.Notifications {
		require.Len(t, nt.Deliveries, 1)
		assert.Equal(t, "delivered", nt.Deliveries[0].Status, nt.Event)
	}
	require.Len(t, list.Destinations, 1)
	assert.NotContains(t, list.Destinations[0].URL, "/hook", "the URL's path is not shown")
}
