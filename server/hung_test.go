package server_test

import (
	"context"
	"encoding/json"
	"slices"
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
)

// hungStall is the longest a frozen Redis may stop the executor's stage calls (issue 14:
// "no stall longer than 2 s under a hung Redis"): the client's 1 s timeouts, once.
const hungStall = 2 * time.Second

// hungTicks is the "tick" stage kind: it sleeps params.ms milliseconds and records when each
// call started, per tenant and stage.
type hungTicks struct {
	mu     sync.Mutex
	starts []time.Time
	calls  map[string]int
}

func (h *hungTicks) register(reg *stagekind.Registry) {
	if err := reg.Register("tick", stage.HandlerFunc(h.run)); err != nil {
		panic(err)
	}
}

func (h *hungTicks) run(ctx context.Context, req stage.Request) (json.RawMessage, error) {
	ms, err := dgBakeMillis(req.Params["ms"])
	if err != nil {
		return nil, stage.Permanent(err)
	}
	h.mu.Lock()
	h.starts = append(h.starts, time.Now())
	h.calls[dgBakeKey(req.TenantID, req.Stage)]++
	h.mu.Unlock()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(time.Duration(ms) * time.Millisecond):
	}
	return nil, nil
}

// between returns the call starts in [from, to], in order.
func (h *hungTicks) between(from, to time.Time) []time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []time.Time
	for _, at := range h.starts {
		if !at.Before(from) && !at.After(to) {
			out = append(out, at)
		}
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}

func (h *hungTicks) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.starts)
}

// A Redis that stops answering (SIGSTOP) in the middle of a plan holds the executor's runs up
// for at most one client timeout: every wait on Redis, the auto-pipeline's included, is
// bounded; the runs then go on degraded, on memory, at full speed. (Tasks still queued in
// Redis wait for it: another executor may reach Redis and claim them. Here every task runs
// from before the freeze to after it.) After the thaw every stage ran exactly once and the
// plan completes.
func TestAHungRedisStallsStagesAtMostOneTimeout(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	ticks := &hungTicks{calls: map[string]int{}}
	srv := servertest.With(t, server.Config{RedisURL: rs.URL(), Topology: server.TopologyAlone, Logger: dgLogger()}, ticks.register)
	frozen := false
	t.Cleanup(func() {
		if frozen {
			rs.Thaw()
		}
	})
	c := newDGClient(t, srv)

	const tenants, stages, stageMs = 8, 100, 40
	p := newDGPlan("hung", tenants, slices.Repeat([]int{stageMs}, stages), 8)
	req := p.request()
	for i := range req.Stages {
		req.Stages[i].Kind = "tick"
	}
	var submitted struct {
		PlanID string `json:"planId"`
	}
	resp := c.do("POST", "/v1/plans", req, &submitted)
	require.Equal(t, 201, resp.StatusCode)
	dgPoll(t, dgWait, func() bool { return ticks.count() >= tenants*stages/20 }, "the plan never got going")

	rs.Freeze()
	frozen = true
	frozenAt := time.Now()
	const hold = 3 * time.Second
	time.Sleep(hold)
	rs.Thaw()
	frozen = false
	thawedAt := time.Now()

	during := ticks.between(frozenAt, thawedAt)
	require.NotEmpty(t, during, "no stage started while Redis was frozen")
	gaps := []time.Duration{during[0].Sub(frozenAt)}
	for i := 1; i < len(during); i++ {
		gaps = append(gaps, during[i].Sub(during[i-1]))
	}
	gaps = append(gaps, thawedAt.Sub(during[len(during)-1]))
	longest := slices.Max(gaps)
	t.Logf("while frozen %v: %d stage calls, longest stall %v (first call %v after the freeze)",
		hold, len(during), longest.Round(time.Millisecond), gaps[0].Round(time.Millisecond))
	assert.LessOrEqual(t, longest, hungStall, "the longest stretch without a stage call while Redis was frozen")
	// 8 runs, 40 ms stages: hundreds of calls in the seconds after the stall.
	assert.Greater(t, len(during), 200, "stage calls while Redis was frozen: the runs went on at speed")

	c.waitCompleted(submitted.PlanID)
	ticks.mu.Lock()
	defer ticks.mu.Unlock()
	for _, tn := range p.tenants {
		for _, st := range p.stages {
			assert.Equal(t, 1, ticks.calls[dgBakeKey(tn, st)], "calls of %s", dgBakeKey(tn, st))
		}
	}
}
