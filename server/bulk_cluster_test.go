package server_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/server"
	"github.com/executor-dev/executor/wire"
)

// listTotal is the total of a plan's task listing with query, read through srv.
func listTotal(t *testing.T, srv *server.Server, planID, query string) int {
	t.Helper()
	var page wire.TaskList
	require.Equal(t, http.StatusOK, cfHTTP(t, http.MethodGet, srv.URL()+"/v1/plans/"+planID+"/tasks?limit=1&"+query, "", &page))
	return page.Total
}

// bulkOn posts an action on a filter to srv.
func bulkOn(t *testing.T, srv *server.Server, planID, action, body string) wire.BulkResult {
	t.Helper()
	var res wire.BulkResult
	require.Equal(t, http.StatusOK, cfHTTP(t, http.MethodPost, srv.URL()+"/v1/plans/"+planID+"/tasks/"+action, body, &res))
	return res
}

// Actions on a filter take effect wherever the tasks run: on two executors sharing Redis, a
// plan submitted to A is approved by tenant prefix through B (the listing through A sees the
// approved tasks at their next stage), the approved runs are cancelled mid-stage through B by
// status and stage, and the rest rejected through A; no later stage is ever called.
func TestBulkActionsAcrossExecutors(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	a, b := twoExecutors(t)
	var ids []string
	for i := range 30 {
		ids = append(ids, fmt.Sprintf("bx-%02d", i))
	}
	gate := `{"name":"gate","kind":"approval","params":{"message":"ship?"}}`
	p := submitPlan(t, a, []string{tg.stageJSON("push", "ms=0"), gate, tg.stageJSON("bake", "ms=20000"), tg.stageJSON("check", "ms=0")},
		ids, `,"maxConcurrency":30`)
	require.Eventually(t, func() bool { return listTotal(t, b, p.PlanID, "status=WAITING&stage=gate") == 30 },
		20*time.Second, 20*time.Millisecond)

	res := bulkOn(t, b, p.PlanID, "approve", `{"tenant":"bx-1","comment":"ring 1"}`)
	assert.Equal(t, 10, res.Matched)
	assert.Equal(t, 10, res.Applied)
	require.Eventually(t, func() bool {
		n := 0
		for i := 10; i < 20; i++ {
			if tg.running(fmt.Sprintf("bx-%02d", i), "bake") {
				n++
			}
		}
		return n == 10
	}, 20*time.Second, 10*time.Millisecond, "the approved tenants run their bake")
	assert.Equal(t, 10, listTotal(t, a, p.PlanID, "status=RUNNING&stage=bake"), "A's listing sees what B approved")
	assert.Equal(t, 20, listTotal(t, a, p.PlanID, "status=WAITING"))

	res = bulkOn(t, b, p.PlanID, "cancel", `{"status":["RUNNING"],"stage":"bake"}`)
	assert.Equal(t, 10, res.Applied)
	require.Eventually(t, func() bool {
		n := 0
		for i := 10; i < 20; i++ {
			n += len(tg.callsOf(fmt.Sprintf("bx-%02d", i), "bake"))
		}
		return n == 10
	}, 10*time.Second, 5*time.Millisecond)
	for i := 10; i < 20; i++ {
		c := tg.callsOf(fmt.Sprintf("bx-%02d", i), "bake")
		require.Len(t, c, 1)
		assert.True(t, c[0].cancelled, "bx-%02d's bake was cut short", i)
	}

	res = bulkOn(t, a, p.PlanID, "reject", `{"stage":"gate","comment":"not this week"}`)
	assert.Equal(t, 20, res.Applied)
	var done wire.Plan
	cfHTTP(t, http.MethodGet, b.URL()+"/v1/plans/"+p.PlanID+"?wait=20s", "", &done)
	assert.Equal(t, 10, done.Progress["CANCELLED"])
	assert.Equal(t, 20, done.Progress["FAILED"])
	for _, id := range ids {
		assert.Empty(t, tg.callsOf(id, "check"), "%s: no later stage is called", id)
	}
}
