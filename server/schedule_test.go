package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
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

// runCounter counts, across executors, the stage runs of each task.
type runCounter struct {
	mu   sync.Mutex
	runs map[string]int // by task id
	by   map[string]int // by executor name
}

func (c *runCounter) kind(name string) func(*stagekind.Registry) {
	return func(r *stagekind.Registry) {
		err := r.Register("counted", stage.HandlerFunc(func(context.Context, stage.Request) (json.RawMessage, error) {
			return nil, nil
		}))
		if err != nil {
			panic(err)
		}
		_ = r.Register("counted-start", stage.HandlerFunc(func(_ context.Context, req stage.Request) (json.RawMessage, error) {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.runs[req.TaskID]++
			c.by[name]++
			return nil, nil
		}))
	}
}

func submitScheduled(t *testing.T, srv *server.Server, name string, at time.Time, tenants ...string) wire.Plan {
	t.Helper()
	ts := make([]map[string]string, len(tenants))
	for i, tn := range tenants {
		ts[i] = map[string]string{"id": tn}
	}
	body, err := json.Marshal(map[string]any{
		"name": name, "startAt": at.UTC().Format(time.RFC3339Nano), "maxConcurrency": 10,
		"stages":  []map[string]string{{"name": "one", "kind": "counted-start"}, {"name": "two", "kind": "counted"}},
		"tenants": ts,
	})
	require.NoError(t, err)
	resp, err := http.Post(srv.URL()+"/v1/plans", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	var p wire.Plan
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&p))
	return p
}

func getPlan(t *testing.T, srv *server.Server, id, wait string) wire.Plan {
	t.Helper()
	resp, err := http.Get(srv.URL() + "/v1/plans/" + id + wait)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var p wire.Plan
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&p))
	return p
}

// Two executors share one Redis; scheduled plans submitted to either start exactly once,
// at (not before) their startAt, whichever executor claims them.
func TestScheduledPlansStartExactlyOnceAcrossTwoExecutors(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	count := &runCounter{runs: map[string]int{}, by: map[string]int{}}
	a := servertest.With(t, server.Config{RedisURL: rs.URL()}, count.kind("a"))
	b := servertest.With(t, server.Config{RedisURL: rs.URL()}, count.kind("b"))

	at := time.Now().Add(1500 * time.Millisecond)
	var plans []wire.Plan
	for i := range 10 {
		srv := a
		if i%2 == 1 {
			srv = b
		}
		plans = append(plans, submitScheduled(t, srv, fmt.Sprintf("sched-%d", i), at,
			fmt.Sprintf("s%d-a", i), fmt.Sprintf("s%d-b", i)))
	}
	for _, p := range plans {
		assert.Equal(t, "SCHEDULED", p.Status)
		assert.Equal(t, "SCHEDULED", getPlan(t, b, p.PlanID, "").Status, "SCHEDULED until claimed, on every executor")
	}
	members, err := rs.Client().ZCard(context.Background(), "executor:schedule").Result()
	require.NoError(t, err)
	assert.EqualValues(t, 10, members, "every scheduled plan is in executor:schedule")

	for _, p := range plans {
		got := getPlan(t, a, p.PlanID, "?wait=20s")
		require.Equal(t, "COMPLETED", got.Status, p.Name)
		require.NotNil(t, got.StartedAt)
		assert.False(t, got.StartedAt.Before(at.Truncate(time.Millisecond)), "%s started early", p.Name)
	}
	count.mu.Lock()
	defer count.mu.Unlock()
	for _, p := range plans {
		for _, taskID := range p.TaskIDs {
			assert.Equal(t, 1, count.runs[taskID], "task %s of %s ran exactly once", taskID, p.Name)
		}
	}
	t.Logf("stage runs by executor: %v", count.by)
	members, err = rs.Client().ZCard(context.Background(), "executor:schedule").Result()
	require.NoError(t, err)
	assert.Zero(t, members, "started plans leave the schedule")
}

// A scheduled plan cancelled on one executor is not started by the other.
func TestScheduledPlanCancelledOnOneExecutorNeverStarts(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	count := &runCounter{runs: map[string]int{}, by: map[string]int{}}
	a := servertest.With(t, server.Config{RedisURL: rs.URL()}, count.kind("a"))
	b := servertest.With(t, server.Config{RedisURL: rs.URL()}, count.kind("b"))

	at := time.Now().Add(700 * time.Millisecond)
	p := submitScheduled(t, a, "cancelled", at, "c-1")
	resp, err := http.Post(b.URL()+"/v1/plans/"+p.PlanID+"/cancel", "application/json", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	time.Sleep(time.Until(at) + 500*time.Millisecond) // past its start: nothing may start it
	got := getPlan(t, a, p.PlanID, "")
	assert.Equal(t, "CANCELLED", got.Status)
	assert.Nil(t, got.StartedAt)
	count.mu.Lock()
	defer count.mu.Unlock()
	assert.Empty(t, count.runs)
}
