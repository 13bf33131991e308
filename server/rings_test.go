package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// ringBake is the bake of the acceptance's rings.
const ringBake = 2 * time.Second

// ringsBody is a submission of n tenants (ring-000, ...) with one http stage calling tg;
// tenants in failing have their call fail. waves is the JSON list of waves.
func ringsBody(tg *target, n int, failing map[int]bool, waves, extra string) string {
	var ts []string
	for i := range n {
		fail := 0
		if failing[i] {
			fail = 1
		}
		ts = append(ts, fmt.Sprintf(`{"id":"ring-%03d","params":{"fail":"%d"}}`, i, fail))
	}
	stage := fmt.Sprintf(`{"name":"deploy","kind":"http","retry":{"maxAttempts":1},"params":{"method":"GET","url":"%s/{{.TenantID}}/deploy?ms=20&failRun={{.Params.fail}}"}}`, tg.srv.URL)
	return fmt.Sprintf(`{"name":"rings","maxConcurrency":20,"stages":[%s],"tenants":[%s],"waves":%s%s}`,
		stage, strings.Join(ts, ","), waves, extra)
}

// acceptanceWaves are rings 1 / 10 % / 50 % / rest, each baked 2 s, approve after the first.
func acceptanceWaves(tenPctBudget string) string {
	budget := ""
	if tenPctBudget != "" {
		budget = fmt.Sprintf(`,"failureBudget":%q`, tenPctBudget)
	}
	return fmt.Sprintf(`[{"name":"first","size":1,"bake":"2s","then":"approve"},`+
		`{"name":"ten","size":"10%%","bake":"2s"%s},{"name":"half","size":"50%%","bake":"2s","maxConcurrency":5},{"name":"rest","size":"rest"}]`, budget)
}

// planOf reads a plan through srv.
func planOf(t *testing.T, srv *server.Server, id string) wire.Plan {
	t.Helper()
	var p wire.Plan
	require.Equal(t, http.StatusOK, cfHTTP(t, http.MethodGet, srv.URL()+"/v1/plans/"+id, "", &p))
	return p
}

// eventuallyRing waits until the plan's current ring is ring in state.
func eventuallyRing(t *testing.T, srv *server.Server, id string, ring int, state string) wire.Plan {
	t.Helper()
	var p wire.Plan
	require.Eventually(t, func() bool {
		p = planOf(t, srv, id)
		return p.Rings != nil && p.Rings.Current == ring && p.Rings.Waves[ring].State == state
	}, 30*time.Second, 20*time.Millisecond, "ring %d %s", ring, state)
	return p
}

// ringCalls returns, per ring, the target's deploy calls of its tenants (as the dry run dealt
// them).
func ringCalls(tg *target, rings []wire.RingPreview) [][]call {
	out := make([][]call, len(rings))
	for k, r := range rings {
		for _, tn := range r.Tenants {
			out[k] = append(out[k], tg.callsOf(tn, "deploy")...)
		}
	}
	return out
}

// The acceptance of progressive rollouts: 200 tenants in rings 1 / 10 % / 50 % / rest, each
// baked 2 s, approval after the first. The dry run deals 1, 20, 100 and 79 tenants; the
// target sees ring k+1's first call only after ring k's last call ended and its bake passed;
// approval is asked once; the plan completes.
func TestRingsStartAfterTheRingBeforeCompletedAndBaked(t *testing.T) {
	onBothBackends(t, testRingsStartAfterTheRingBeforeCompletedAndBaked)
}

func testRingsStartAfterTheRingBeforeCompletedAndBaked(t *testing.T, srv, other *server.Server) {
	tg := newTarget(t)
	body := ringsBody(tg, 200, nil, acceptanceWaves(""), "")

	var dry wire.DryRun
	require.Equal(t, http.StatusOK, cfHTTP(t, http.MethodPost, srv.URL()+"/v1/plans?dryRun=true", body, &dry))
	require.Len(t, dry.Rings, 4)
	sizes := []int{1, 20, 100, 79}
	for k, r := range dry.Rings {
		assert.Len(t, r.Tenants, sizes[k], r.Wave)
	}
	assert.Equal(t, []string{"ring-000"}, dry.Rings[0].Tenants, "submission order")
	assert.Equal(t, "ring-001", dry.Rings[1].Tenants[0])

	var p wire.Plan
	require.Equal(t, http.StatusCreated, cfHTTP(t, http.MethodPost, srv.URL()+"/v1/plans", body, &p))
	srv = other // watched and commanded through the other executor, when there are two
	require.NotNil(t, p.Rings)
	assert.Equal(t, 0, p.Rings.Current)
	for k, w := range p.Rings.Waves {
		assert.Equal(t, sizes[k], w.Tenants, w.Name)
	}

	baking := eventuallyRing(t, srv, p.PlanID, 0, "baking")
	require.NotNil(t, baking.Rings.Waves[0].BakeEndsAt)
	assert.Positive(t, baking.Rings.Waves[0].BakeLeftMs)
	assert.LessOrEqual(t, baking.Rings.Waves[0].BakeLeftMs, ringBake.Milliseconds())
	eventuallyRing(t, srv, p.PlanID, 0, "awaiting_approval")
	time.Sleep(200 * time.Millisecond) // nothing of ring 1 starts while approval is awaited
	calls := ringCalls(tg, dry.Rings)
	require.Len(t, calls[0], 1)
	require.Empty(t, calls[1], "ring 1 waits for approval")

	approved := time.Now()
	require.Equal(t, http.StatusOK, cfHTTP(t, http.MethodPost, srv.URL()+"/v1/plans/"+p.PlanID+"/approve", "", nil))
	require.Eventually(t, func() bool { return planOf(t, srv, p.PlanID).Status == "COMPLETED" }, 60*time.Second, 50*time.Millisecond)
	end := planOf(t, srv, p.PlanID)
	for _, w := range end.Rings.Waves {
		assert.Equal(t, "passed", w.State, w.Name)
	}
	// Approval was asked once: the one approve above took the plan to its end.
	status, _ := cfTryHTTP(http.MethodPost, srv.URL()+"/v1/plans/"+p.PlanID+"/approve", "", nil)
	assert.Equal(t, http.StatusConflict, status)

	calls = ringCalls(tg, dry.Rings)
	for k := range calls {
		require.Len(t, calls[k], sizes[k], "ring %d: each tenant called once", k)
	}
	assert.False(t, firstStart(calls[1]).Before(approved), "ring 1 starts after the approval")
	for k := 2; k < len(calls); k++ {
		prevEnd, first := lastEnd(calls[k-1]), firstStart(calls[k])
		assert.GreaterOrEqual(t, first.Sub(prevEnd), ringBake,
			"ring %d's first call (%s) comes after ring %d completed (%s) and baked %s", k, first, k-1, prevEnd, ringBake)
	}
	assert.LessOrEqual(t, maxOverlap(calls[2]), 5, "ring 2 runs at most its own maxConcurrency at once")
}

// maxOverlap is how many of calls were in flight at once, at most.
func maxOverlap(calls []call) int {
	peak := 0
	for _, c := range calls {
		n := 0
		for _, d := range calls {
			if !d.start.After(c.start) && d.end.After(c.start) {
				n++
			}
		}
		peak = max(peak, n)
	}
	return peak
}

// A ring's failure budget: 3 of the 10 % ring's 20 tenants fail, over its 10 % budget. The
// plan halts with the ring, the failures and the threshold; no tenant of the next ring is
// called. Approve goes on: the halted ring completes (its budget waived) and the later rings
// run; the plan ends FAILED, 3 tenants failed.
func TestRingOverItsFailureBudgetHaltsThePlan(t *testing.T) {
	onBothBackends(t, testRingOverItsFailureBudgetHaltsThePlan)
}

func testRingOverItsFailureBudgetHaltsThePlan(t *testing.T, srv, other *server.Server) {
	tg := newTarget(t)
	waves := `[{"name":"first","size":1},{"name":"ten","size":"10%","failureBudget":"10%"},{"name":"half","size":"50%"},{"name":"rest","size":"rest"}]`
	failing := map[int]bool{1: true, 2: true, 3: true} // ring 1 is tenants 1..20
	body := ringsBody(tg, 200, failing, waves, `,"maxConcurrency":4`)
	body = strings.Replace(body, `"maxConcurrency":20,`, "", 1)
	var p wire.Plan
	require.Equal(t, http.StatusCreated, cfHTTP(t, http.MethodPost, srv.URL()+"/v1/plans", body, &p))
	srv = other // watched and commanded through the other executor, when there are two

	halted := eventuallyRing(t, srv, p.PlanID, 1, "halted")
	require.NotNil(t, halted.Rings.Halted)
	assert.Equal(t, "ten", halted.Rings.Halted.Wave)
	assert.Contains(t, halted.Rings.Halted.Reason, "3 of 20")
	assert.Contains(t, halted.Rings.Halted.Reason, "10%")
	assert.Equal(t, "RUNNING", halted.Status, "halted, it waits for an operator")
	time.Sleep(300 * time.Millisecond) // running tasks finish; nothing new starts
	for i := 21; i < 200; i++ {
		require.Empty(t, tg.callsOf(fmt.Sprintf("ring-%03d", i), "deploy"), "ring-%03d of a later ring was called", i)
	}
	before := 0
	for i := 1; i <= 20; i++ {
		before += len(tg.callsOf(fmt.Sprintf("ring-%03d", i), "deploy"))
	}
	assert.Less(t, before, 20, "the halted ring's queued tenants did not start")

	require.Equal(t, http.StatusOK, cfHTTP(t, http.MethodPost, srv.URL()+"/v1/plans/"+p.PlanID+"/approve", "", nil))
	require.Eventually(t, func() bool { return planOf(t, srv, p.PlanID).Status == "FAILED" }, 60*time.Second, 50*time.Millisecond)
	end := planOf(t, srv, p.PlanID)
	assert.Equal(t, 3, end.Progress["FAILED"])
	assert.Equal(t, 197, end.Progress["COMPLETED"])
	for i := range 200 {
		assert.Len(t, tg.callsOf(fmt.Sprintf("ring-%03d", i), "deploy"), 1, "ring-%03d", i)
	}
}

// A failing health gate halts the plan after the ring's bake, and reject cancels the rest: the
// check is made once, no later tenant is called; the plan's events follow the ring (running,
// baking, checking, halted).
func TestRingFailingHealthGateHaltsThePlan(t *testing.T) {
	onBothBackends(t, testRingFailingHealthGateHaltsThePlan)
}

func testRingFailingHealthGateHaltsThePlan(t *testing.T, srv, other *server.Server) {
	tg := newTarget(t)
	health := fmt.Sprintf(`{"params":{"method":"GET","url":"%s/health-{{.Params.wave}}/check?failRun=1"},"timeout":"5s"}`, tg.srv.URL)
	waves := fmt.Sprintf(`[{"name":"first","size":2,"bake":"500ms","health":%s},{"name":"rest","size":"rest"}]`, health)
	events := openEvents(t, srv.URL()+"/v1/events", "")
	var p wire.Plan
	require.Equal(t, http.StatusCreated, cfHTTP(t, http.MethodPost, srv.URL()+"/v1/plans", ringsBody(tg, 10, nil, waves, ""), &p))
	srv = other // watched and commanded through the other executor, when there are two

	var states []string
	events.until(t, func(ev sse) bool {
		if ev.name != "plan" || ev.data.PlanID != p.PlanID || ev.data.Ring == nil {
			return false
		}
		if len(states) == 0 || states[len(states)-1] != ev.data.Ring.State {
			states = append(states, ev.data.Ring.State)
		}
		return ev.data.Ring.State == "halted"
	})
	assert.Equal(t, []string{"running", "baking", "checking", "halted"}, states, "the events follow the ring")
	halted := eventuallyRing(t, srv, p.PlanID, 0, "halted")
	require.NotNil(t, halted.Rings.Halted)
	assert.Contains(t, halted.Rings.Halted.Reason, "health check failed")
	require.Len(t, tg.callsOf("health-first", "check"), 1, "the check is made once")
	check, ring0End := tg.callsOf("health-first", "check")[0], lastEnd(append(tg.callsOf("ring-000", "deploy"), tg.callsOf("ring-001", "deploy")...))
	assert.GreaterOrEqual(t, check.start.Sub(ring0End), 500*time.Millisecond, "after the bake")

	require.Equal(t, http.StatusOK, cfHTTP(t, http.MethodPost, srv.URL()+"/v1/plans/"+p.PlanID+"/reject", "", nil))
	require.Eventually(t, func() bool { return planOf(t, srv, p.PlanID).Status == "CANCELLED" }, 30*time.Second, 50*time.Millisecond)
	end := planOf(t, srv, p.PlanID)
	assert.Equal(t, 2, end.Progress["COMPLETED"])
	assert.Equal(t, 8, end.Progress["CANCELLED"])
	assert.Equal(t, "rejected", end.Rings.Waves[0].State)
	for i := 2; i < 10; i++ {
		assert.Empty(t, tg.callsOf(fmt.Sprintf("ring-%03d", i), "deploy"))
	}
}

// Bad rings are refused naming the field, and nothing is created.
func TestRingsBadInputNamesTheField(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	srv := servertest.Start(t)
	tests := []struct {
		name, waves, extra, field string
	}{
		{"rest not last", `[{"size":"rest"},{"size":1}]`, "", "waves[0].size"},
		{"size missing", `[{"size":1},{"name":"b"}]`, "", "waves[1].size"},
		{"size not a share", `[{"size":"ten"},{"size":"rest"}]`, "", "waves[0].size"},
		{"bake", `[{"size":1,"bake":"soon"},{"size":"rest"}]`, "", "waves[0].bake"},
		{"then", `[{"size":1,"then":"later"},{"size":"rest"}]`, "", "waves[0].then"},
		{"budget", `[{"size":1,"failureBudget":"200%"},{"size":"rest"}]`, "", "waves[0].failureBudget"},
		{"order", `[{"size":1},{"size":"rest"}]`, `,"order":"random"`, "order"},
		{"tenants left", `[{"size":1},{"size":2}]`, "", "waves"},
		{"canary and waves", `[{"size":1},{"size":"rest"}]`, `,"canary":{"tenants":1,"then":"auto"}`, "waves"},
		{"health template", `[{"size":1,"health":{"params":{"url":"http://h/{{.Nope}}"}}},{"size":"rest"}]`, "", "waves[0].health.params.url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, err := cfTryHTTP(http.MethodPost, srv.URL()+"/v1/plans", ringsBody(tg, 5, nil, tt.waves, tt.extra), nil)
			require.Equal(t, http.StatusBadRequest, status, "%v", err)
			assert.Contains(t, err.Error(), `"field":"`+tt.field+`"`)
		})
	}
	status, err := cfTryHTTP(http.MethodPost, srv.URL()+"/v1/plans",
		strings.Replace(ringsBody(tg, 5, nil, `[{"size":1},{"size":"rest"}]`, ""), `,"waves":[{"size":1},{"size":"rest"}]`, `,"failureBudget":"5%"`, 1), nil)
	require.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, err.Error(), `"field":"failureBudget"`, "a ring budget needs waves")
	var list wire.PlanList
	require.Equal(t, http.StatusOK, cfHTTP(t, http.MethodGet, srv.URL()+"/v1/plans", "", &list))
	assert.Empty(t, list.Plans, "nothing was created")
}

// onBothBackends runs test on one executor on the memory store, and on two executors sharing
// a Redis (the plan submitted to the first, watched and commanded through the second).
func onBothBackends(t *testing.T, test func(t *testing.T, srv, other *server.Server)) {
	t.Parallel()
	t.Run("memory", func(t *testing.T) {
		t.Parallel()
		srv := servertest.Start(t)
		test(t, srv, srv)
	})
	t.Run("two executors on Redis", func(t *testing.T) {
		t.Parallel()
		a, b := twoExecutors(t)
		test(t, a, b)
	})
}

func firstStart(calls []call) time.Time {
	var t time.Time
	for _, c := range calls {
		if t.IsZero() || c.start.Before(t) {
			t = c.start
		}
	}
	return t
}

func lastEnd(calls []call) time.Time {
	var t time.Time
	for _, c := range calls {
		if c.end.After(t) {
			t = c.end
		}
	}
	return t
}
