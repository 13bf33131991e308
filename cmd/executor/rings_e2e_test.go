package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/wire"
)

// ringTarget is a loopback deployment target recording when each tenant's call started and
// ended: GET /<tenant> answers after 20 ms.
type ringTarget struct {
	srv *httptest.Server

	mu    sync.Mutex
	calls map[string][]ringCall
}

type ringCall struct{ start, end time.Time }

func newRingTarget(t *testing.T) *ringTarget {
	t.Helper()
	rt := &ringTarget{calls: map[string][]ringCall{}}
	rt.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := ringCall{start: time.Now()}
		time.Sleep(20 * time.Millisecond)
		c.end = time.Now()
		rt.mu.Lock()
		tenant := strings.Trim(r.URL.Path, "/")
		rt.calls[tenant] = append(rt.calls[tenant], c)
		rt.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(rt.srv.Close)
	return rt
}

// span returns the first start and the last end of the calls of tenants, and how many there
// were.
func (rt *ringTarget) span(tenants []string) (first, last time.Time, n int) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for _, tn := range tenants {
		for _, c := range rt.calls[tn] {
			n++
			if first.IsZero() || c.start.Before(first) {
				first = c.start
			}
			if c.end.After(last) {
				last = c.end
			}
		}
	}
	return first, last, n
}

// getPlan reads a plan through p.
func getPlan(t *testing.T, p *executorProc, id string) (wire.Plan, bool) {
	t.Helper()
	resp, err := http.Get(p.URL() + "/v1/plans/" + id)
	if err != nil {
		return wire.Plan{}, false
	}
	defer resp.Body.Close()
	var out wire.Plan
	return out, resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&out) == nil
}

// The acceptance's rings on two executors sharing Redis: 200 tenants, rings 1 / 10 % / 50 % /
// rest, each baked 2 s, approval after the first. The executor that completed the first ring
// (and scheduled its bake's end) is killed (kill -9) mid-bake: the other ends the bake at its
// recorded time, asks for approval once, and the plan completes through it; every ring's first
// call comes after the ring before completed and baked.
func TestRingsOnTwoExecutorsSurviveTheBakeHolderKilled(t *testing.T) {
	t.Parallel()
	rt := newRingTarget(t)
	rs := redistest.Start(t)
	execs := map[string]*executorProc{
		"exec-a": startExecutor(t, "A", rs.URL(), "--name", "exec-a"),
		"exec-b": startExecutor(t, "B", rs.URL(), "--name", "exec-b"),
	}
	const bake = 2 * time.Second
	req := wire.PlanRequest{
		Name: "rings-e2e", MaxConcurrency: 20,
		Stages: []wire.StageRequest{{Name: "deploy", Kind: "http", Retry: &wire.RetryRequest{MaxAttempts: 1},
			Params: map[string]any{"method": "GET", "url": rt.srv.URL + "/{{.TenantID}}"}}},
		Tenants: tenantsN("rg", 200),
		Waves: []wire.WaveRequest{
			{Name: "first", Size: 1, Bake: bake.String(), Then: "approve"},
			{Name: "ten", Size: "10%", Bake: bake.String()},
			{Name: "half", Size: "50%", Bake: bake.String()},
			{Name: "rest", Size: "rest"},
		},
	}
	body, err := json.Marshal(req)
	require.NoError(t, err)
	resp, err := http.Post(execs["exec-a"].URL()+"/v1/plans", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	var p wire.Plan
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&p))
	resp.Body.Close()
	require.NotNil(t, p.Rings)

	var baking wire.Plan
	require.Eventually(t, func() bool {
		got, ok := getPlan(t, execs["exec-a"], p.PlanID)
		baking = got
		return ok && got.Rings.Waves[0].State == "baking"
	}, pollTimeout, 10*time.Millisecond, "the first ring bakes")
	holder := ""
	require.Eventually(t, func() bool {
		for name, e := range execs {
			if strings.Contains(e.output.String(), `"msg":"rollout: complete ring"`) {
				holder = name
				return true
			}
		}
		return false
	}, pollTimeout, 10*time.Millisecond, "an executor logged the ring's completion")
	execs[holder].kill(t)
	killedAt := time.Now()
	delete(execs, holder)
	var survivor *executorProc
	for _, e := range execs {
		survivor = e
	}
	require.Positive(t, baking.Rings.Waves[0].BakeLeftMs, "killed mid-bake")
	t.Logf("%s killed %s before the bake's end", holder, time.Until(*baking.Rings.Waves[0].BakeEndsAt).Round(time.Millisecond))

	var awaiting wire.Plan
	require.Eventually(t, func() bool {
		got, ok := getPlan(t, survivor, p.PlanID)
		awaiting = got
		return ok && got.Rings.Waves[0].State == "awaiting_approval"
	}, pollTimeout, 20*time.Millisecond, "the survivor ends the bake")
	assert.False(t, time.Now().Before(*baking.Rings.Waves[0].BakeEndsAt), "not before the recorded bake end")
	t.Logf("approval asked %s after the kill", time.Since(killedAt).Round(time.Millisecond))
	_, _, n := rt.span(tenantNames(1, 21))
	require.Zero(t, n, "ring 1 waits for the approval")
	assert.Equal(t, 0, awaiting.Rings.Current)

	requireExit(t, 0, survivor.cli(t, "plan", "approve", p.PlanID))
	done := watchPlan(t, survivor, p.PlanID)
	require.Equal(t, "COMPLETED", done.Status)
	for _, w := range done.Rings.Waves {
		assert.Equal(t, "passed", w.State, w.Name)
	}
	bounds := []int{0, 1, 21, 121, 200}
	var prevLast time.Time
	for k := range 4 {
		first, last, n := rt.span(tenantNames(bounds[k], bounds[k+1]))
		require.Equal(t, bounds[k+1]-bounds[k], n, "ring %d: each tenant called once", k)
		if k >= 2 {
			assert.GreaterOrEqual(t, first.Sub(prevLast), bake, "ring %d starts after ring %d completed and baked", k, k-1)
		}
		prevLast = last
	}
}

// tenantNames are rg-<from> … rg-<to-1>.
func tenantNames(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("rg-%03d", i))
	}
	return out
}

// One executor on Redis killed (kill -9) mid-bake and started again: the bake's end, recorded
// in Redis, is kept. The restarted executor ends the bake (not before its recorded end), asks
// for approval, and the plan completes.
func TestRingsBakeSurvivesARestart(t *testing.T) {
	t.Parallel()
	rt := newRingTarget(t)
	rs := redistest.Start(t)
	a := startExecutor(t, "A", rs.URL(), "--name", "exec-a")
	req := wire.PlanRequest{
		Name: "rings-restart", MaxConcurrency: 5,
		Stages: []wire.StageRequest{{Name: "deploy", Kind: "http", Retry: &wire.RetryRequest{MaxAttempts: 1},
			Params: map[string]any{"method": "GET", "url": rt.srv.URL + "/{{.TenantID}}"}}},
		Tenants: tenantsN("rg", 10),
		Waves:   []wire.WaveRequest{{Name: "first", Size: 2, Bake: "3s", Then: "approve"}, {Name: "rest", Size: "rest"}},
	}
	body, err := json.Marshal(req)
	require.NoError(t, err)
	resp, err := http.Post(a.URL()+"/v1/plans", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	var p wire.Plan
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&p))
	resp.Body.Close()

	var baking wire.Plan
	require.Eventually(t, func() bool {
		got, ok := getPlan(t, a, p.PlanID)
		baking = got
		return ok && got.Rings.Waves[0].State == "baking"
	}, pollTimeout, 10*time.Millisecond, "the first ring bakes")
	a.kill(t)
	require.Eventually(t, func() bool { // its liveness key expires: the name is free again
		return rs.Client().Exists(context.Background(), rediskey.New("").Executor("exec-a")).Val() == 0
	}, pollTimeout, 50*time.Millisecond)
	a = startExecutor(t, "A again", rs.URL(), "--name", "exec-a")
	require.Eventually(t, func() bool {
		got, ok := getPlan(t, a, p.PlanID)
		return ok && got.Rings.Waves[0].State == "awaiting_approval"
	}, pollTimeout, 20*time.Millisecond, "the restarted executor ends the bake")
	assert.False(t, time.Now().Before(*baking.Rings.Waves[0].BakeEndsAt), "not before the recorded bake end")
	_, _, n := rt.span(tenantNames(2, 10))
	require.Zero(t, n, "the rest wait for the approval")
	requireExit(t, 0, a.cli(t, "plan", "approve", p.PlanID))
	done := watchPlan(t, a, p.PlanID)
	require.Equal(t, "COMPLETED", done.Status)
	_, _, n = rt.span(tenantNames(0, 10))
	assert.Equal(t, 10, n, "each tenant called once")
}
