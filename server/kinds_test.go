package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
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

// A stock executor and one built with a custom kind share a Redis. A plan of the custom kind,
// submitted to the stock one, is accepted (a live executor runs the kind) and every task runs
// on the custom executor: the stock one never claims a task to fail it for an unknown kind
// (issue 32: 81 of 150 tenants failed that way). A kind no live executor has is a 400 naming
// the stage; GET /v1/executors lists each executor's kinds.
func TestEveryTaskOfACustomKindRunsOnAnExecutorThatHasIt(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	var flushed atomic.Int64
	custom := func(reg *stagekind.Registry) {
		require.NoError(t, reg.Register("cache-flush", stage.HandlerFunc(func(ctx context.Context, req stage.Request) (json.RawMessage, error) {
			flushed.Add(1)
			select { // long enough that the stock executor's dispatch loop sees the queue too
			case <-time.After(20 * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return json.RawMessage(`{"flushed":true}`), nil
		})))
	}
	stock := newDGClient(t, servertest.With(t, server.Config{RedisURL: rs.URL(), Name: "stock", Logger: dgLogger()}))
	newDGClient(t, servertest.With(t, server.Config{RedisURL: rs.URL(), Name: "custom", Logger: dgLogger()}, custom))

	var list wire.ExecutorList
	require.Equal(t, http.StatusOK, stock.do(http.MethodGet, "/v1/executors", nil, &list).StatusCode)
	kinds := map[string][]string{}
	for _, e := range list.Executors {
		kinds[e.Name] = e.Kinds
	}
	assert.Contains(t, kinds["custom"], "cache-flush")
	assert.NotContains(t, kinds["stock"], "cache-flush")
	assert.Contains(t, kinds["stock"], "http")

	req := wire.PlanRequest{Name: "flush", MaxConcurrency: 30, Stages: []wire.StageRequest{{Name: "flush", Kind: "cache-flush"}}}
	for i := range 60 {
		req.Tenants = append(req.Tenants, wire.TenantRequest{ID: fmt.Sprintf("ck-%02d", i)})
	}
	var p wire.Plan
	require.Equal(t, http.StatusCreated, stock.do(http.MethodPost, "/v1/plans", req, &p).StatusCode, "a live executor runs the kind")
	stock.waitCompleted(p.PlanID)
	for _, tk := range stock.planTasks(p.PlanID) {
		assert.Equal(t, "COMPLETED", tk.Status)
		assert.Equal(t, "custom", tk.Executor, "only the executor that has the kind ran it")
	}
	assert.EqualValues(t, 60, flushed.Load())

	var problem wire.Problem
	req.Stages[0].Kind = "nope"
	require.Equal(t, http.StatusBadRequest, stock.do(http.MethodPost, "/v1/plans", req, &problem).StatusCode)
	assert.Equal(t, "stages[0].kind", problem.Field)
	assert.True(t, slices.ContainsFunc(problem.Errors, func(e wire.FieldProblem) bool { return e.Field == "stages[0].kind" }))
}
