package server_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/infra/rediskey"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/server/servertest"
	"github.com/executor-dev/executor/wire"
)

// lostTasksPlan submits a noop plan for tenants to srv, waits until it completed and returns
// it.
func lostTasksPlan(t *testing.T, srv *server.Server, tenants ...string) wire.Plan {
	t.Helper()
	p := submitPlan(t, srv, []string{`{"name":"check","kind":"noop"}`}, tenants, "")
	var done wire.Plan
	cfHTTP(t, http.MethodGet, srv.URL()+"/v1/plans/"+p.PlanID+"?wait=10s&include=taskIds", "", &done)
	require.Equal(t, "COMPLETED", done.Status)
	return done
}

// A plan whose task hashes Redis lost (the plan's hash survived) reads as a plan: 200, its
// lost tasks listed as missing with their index (their tenant's place in the submission) and
// counted as MISSING; its task listing serves the tasks Redis holds and lists the missing
// ones too. The executor caches no ended task, so that the read goes to Redis as it does on
// an executor that never ran the plan.
func TestAPlanWithLostTasksReadsWithThemMissing(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	srv := servertest.With(t, server.Config{RedisURL: rs.URL(), CacheTasks: -1})
	rdb := rs.Client()
	keys := rediskey.New("")
	tests := []struct {
		name string
		lost []int // indexes of the tasks Redis loses
	}{
		{"the first task", []int{0}},
		{"a middle task", []int{2}},
		{"the last task", []int{4}},
		{"two tasks", []int{1, 3}},
		{"every task", []int{0, 1, 2, 3, 4}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var tenants []string
			for j := range 5 {
				tenants = append(tenants, fmt.Sprintf("lost-%d-%d", i, j))
			}
			p := lostTasksPlan(t, srv, tenants...)
			var want []wire.MissingTask
			for _, j := range tc.lost {
				require.NoError(t, rdb.Del(context.Background(), keys.Task(p.TaskIDs[j])).Err())
				want = append(want, wire.MissingTask{TaskID: p.TaskIDs[j], Index: j})
			}
			kept := len(p.TaskIDs) - len(tc.lost)

			var got wire.Plan
			cfHTTP(t, http.MethodGet, srv.URL()+"/v1/plans/"+p.PlanID, "", &got)
			require.Equal(t, "COMPLETED", got.Status)
			require.Equal(t, want, got.MissingTasks)
			require.Equal(t, 5, got.Progress["total"])
			require.Equal(t, len(tc.lost), got.Progress[wire.ProgressMissing])
			require.Equal(t, kept, got.Progress["COMPLETED"])

			var waited wire.Plan
			cfHTTP(t, http.MethodGet, srv.URL()+"/v1/plans/"+p.PlanID+"?wait=1s", "", &waited)
			require.Equal(t, want, waited.MissingTasks)

			var list wire.PlanList
			cfHTTP(t, http.MethodGet, srv.URL()+"/v1/plans?limit=1", "", &list)
			require.Len(t, list.Plans, 1)
			// The list counts each plan from its index (a list of 100,000-task plans reads no
			// task): it cannot tell a task Redis lost; GET of the plan does.
			require.Empty(t, list.Plans[0].MissingTasks)
			require.Equal(t, 5, list.Plans[0].Progress["total"])

			// The first listing reads every task (limit 1000): it finds the lost ones, still
			// in the plan's index (Redis lost the task hashes only), and drops them from it; from
			// then on every listing lists them missing, whatever its page.
			for _, query := range []string{"", "?status=COMPLETED", "?limit=1"} {
				var tasks wire.TaskList
				cfHTTP(t, http.MethodGet, srv.URL()+"/v1/plans/"+p.PlanID+"/tasks"+query, "", &tasks)
				require.Equal(t, want, tasks.MissingTasks, "tasks%s", query)
				if query == "?limit=1" {
					require.Len(t, tasks.Tasks, min(1, kept), "tasks%s", query)
					continue
				}
				require.Len(t, tasks.Tasks, kept, "tasks%s", query)
				for _, tk := range tasks.Tasks {
					require.NotContains(t, tc.lost, slices.Index(p.TaskIDs, tk.TaskID), "tasks%s", query)
				}
			}
			var ready wire.Health
			cfHTTP(t, http.MethodGet, srv.URL()+"/readyz", "", &ready)
			require.Equal(t, "ok", ready.Status, "a lost ended task is no outage")
		})
	}
}
