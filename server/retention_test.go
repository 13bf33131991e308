package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/plan"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// On the in-memory store, a plan submitted over HTTP that ended is answered for the retention
// from its end, then 404 (the plan, its tasks, its tenants), and nothing of it is held any
// longer: the metrics count no plan and no task.
func TestMemoryStoreForgetsEndedPlansAfterTheRetention(t *testing.T) {
	t.Parallel()
	const retention = 3 * time.Second
	srv := servertest.With(t, server.Config{Retention: retention})
	c := newDGClient(t, srv)
	tenants := []string{"kept-for-a-while-1", "kept-for-a-while-2", "kept-for-a-while-3"}
	req := wire.PlanRequest{Name: "retained", Stages: []wire.StageRequest{{Name: "one", Kind: "noop"}}}
	for _, id := range tenants {
		req.Tenants = append(req.Tenants, wire.TenantRequest{ID: id})
	}
	submitted := time.Now()
	var created wire.Plan
	require.Equal(t, http.StatusCreated, c.do(http.MethodPost, "/v1/plans", req, &created).StatusCode)
	c.waitCompleted(created.PlanID)

	s := scrapeMetrics(t, c)
	require.Equal(t, 1.0, s.value(t, "executor_plans", map[string]string{"status": string(plan.Completed)}), "held at its end")
	require.Equal(t, float64(len(tenants)), s.value(t, "executor_tasks", map[string]string{"status": string(task.Completed)}))
	require.Equal(t, created.PlanID, c.tenantTask(tenants[0]).PlanID)

	require.Eventually(t, func() bool {
		return c.do(http.MethodGet, "/v1/plans/"+created.PlanID, nil, nil).StatusCode == http.StatusNotFound
	}, retention+10*time.Second, 20*time.Millisecond, "the plan is forgotten after the retention")
	assert.GreaterOrEqual(t, time.Since(submitted), retention, "not before the retention")

	for _, id := range tenants {
		assert.Equal(t, http.StatusNotFound, c.do(http.MethodGet, "/v1/tenants/"+id+"/task", nil, nil).StatusCode, id)
	}
	for _, id := range created.TaskIDs {
		assert.Equal(t, http.StatusNotFound, c.do(http.MethodGet, "/v1/tasks/"+id, nil, nil).StatusCode, id)
	}
	var list wire.PlanList
	require.Equal(t, http.StatusOK, c.do(http.MethodGet, "/v1/plans", nil, &list).StatusCode)
	assert.Empty(t, list.Plans, "no longer listed")
	s = scrapeMetrics(t, c)
	for _, st := range plan.Statuses {
		assert.Zero(t, s.value(t, "executor_plans", map[string]string{"status": string(st)}), st)
	}
	for _, st := range task.Statuses {
		assert.Zero(t, s.value(t, "executor_tasks", map[string]string{"status": string(st)}), st)
	}
}
