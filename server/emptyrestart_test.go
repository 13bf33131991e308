package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/stagekind"
	"github.com/executor-dev/executor/wire"
)

// overlap is the "hold" stage kind shared by several executors: it sleeps params.ms
// milliseconds and records, per tenant, how many calls are in flight at once (the most ever)
// and, per tenant and stage, how many calls it got.
type overlap struct {
	mu       sync.Mutex
	inFlight map[string]int
	most     map[string]int
	calls    map[string]int
}

func newOverlap() *overlap {
	return &overlap{inFlight: map[string]int{}, most: map[string]int{}, calls: map[string]int{}}
}

func (o *overlap) register(reg *stagekind.Registry) {
	if err := reg.Register("hold", stage.HandlerFunc(o.run)); err != nil {
		panic(err)
	}
}

func (o *overlap) run(ctx context.Context, req stage.Request) (json.RawMessage, error) {
	ms, err := dgBakeMillis(req.Params["ms"])
	if err != nil {
		return nil, stage.Permanent(err)
	}
	o.mu.Lock()
	o.inFlight[req.TenantID]++
	o.most[req.TenantID] = max(o.most[req.TenantID], o.inFlight[req.TenantID])
	o.calls[dgBakeKey(req.TenantID, req.Stage)]++
	o.mu.Unlock()
	defer func() {
		o.mu.Lock()
		o.inFlight[req.TenantID]--
		o.mu.Unlock()
	}()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(time.Duration(ms) * time.Millisecond):
	}
	return nil, nil
}

func (o *overlap) started() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, c := range o.calls {
		n += c
	}
	return n
}

// holdPlan is a plan of tenants × stages "hold" stages of ms milliseconds (named
// <name>-1, <name>-2, …), all at once.
func holdPlan(name string, tenants []string, stages, ms int) wire.PlanRequest {
	req := wire.PlanRequest{Name: name, MaxConcurrency: len(tenants)}
	for i := range stages {
		req.Stages = append(req.Stages, wire.StageRequest{Name: name + "-" + strconv.Itoa(i+1), Kind: "hold", Params: map[string]any{"ms": ms}})
	}
	for _, tn := range tenants {
		req.Tenants = append(req.Tenants, wire.TenantRequest{ID: tn})
	}
	return req
}

// Issue 14, case 1: A and B share a Redis; A runs tenants whose stages take a while; Redis is
// killed and restarted empty; right after, the same tenants are submitted to B. B answers
// 503 with Retry-After (new claims wait one lease TTL after a data loss) until A has taken
// its tenants back, then 409 (they are A's); no tenant is ever in two calls at once, and A
// completes every stage exactly once. Once A's plan ended, B's submission runs.
func TestNoTenantRunsTwiceAfterRedisRestartsEmpty(t *testing.T) {
	t.Parallel()
	const leaseTTL = 3 * time.Second
	rs := redistest.Start(t)
	rec := newOverlap()
	cfg := server.Config{RedisURL: rs.URL(), LeaseTTL: leaseTTL, Logger: dgLogger()}
	a := newDGClient(t, servertest.With(t, cfg, rec.register))
	b := newDGClient(t, servertest.With(t, cfg, rec.register))

	tenants := []string{"er-1", "er-2", "er-3", "er-4", "er-5", "er-6"}
	var first wire.Plan
	resp := a.do(http.MethodPost, "/v1/plans", holdPlan("before", tenants, 3, 1500), &first)
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	dgPoll(t, dgWait, func() bool { return rec.started() >= len(tenants) }, "A never started its tenants")

	rs.Kill()
	rs.Restart()
	restarted := time.Now()
	time.Sleep(200 * time.Millisecond)

	statuses := map[int]int{}
	var retryAfter string
	for {
		var problem wire.Problem
		resp := b.do(http.MethodPost, "/v1/plans", holdPlan("after", tenants, 1, 10), &problem)
		statuses[resp.StatusCode]++
		if resp.StatusCode == http.StatusServiceUnavailable {
			retryAfter = resp.Header.Get("Retry-After")
			// Why: Redis unreachable (B met the kill and has not probed it back yet), the data
			// loss (while B writes back) or the claims' wait after it.
			require.Regexp(t, "unreachable|lease TTL|lost data", problem.Detail, "the 503 says why")
		}
		if resp.StatusCode != http.StatusServiceUnavailable {
			require.Equal(t, http.StatusConflict, resp.StatusCode, "after the wait the tenants are A's again: %v", statuses)
			break
		}
		require.Less(t, time.Since(restarted), 3*leaseTTL, "B still refuses claims: %v", statuses)
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("B's answers after the empty restart: %v; Retry-After %q; claims refused for %v", statuses, retryAfter, time.Since(restarted).Round(time.Millisecond))
	require.Positive(t, statuses[http.StatusServiceUnavailable], "B refused new claims right after the empty restart")
	secs, err := strconv.Atoi(retryAfter)
	require.NoError(t, err, "Retry-After in seconds")
	assert.Positive(t, secs)
	assert.LessOrEqual(t, time.Duration(secs)*time.Second, leaseTTL+time.Second)

	a.waitCompleted(first.PlanID)
	var second wire.Plan
	resp = b.do(http.MethodPost, "/v1/plans", holdPlan("after", tenants, 1, 10), &second)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "A's plan ended: the tenants are free")
	b.waitCompleted(second.PlanID)

	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, tn := range tenants {
		assert.Equal(t, 1, rec.most[tn], "calls of tenant %s in flight at once", tn)
		for i := range 3 {
			assert.Equal(t, 1, rec.calls[dgBakeKey(tn, "before-"+strconv.Itoa(i+1))], "calls of %s stage %d", tn, i+1)
		}
		assert.Equal(t, 1, rec.calls[dgBakeKey(tn, "after-1")], "calls of %s in B's plan", tn)
	}
}
