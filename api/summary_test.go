package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/domain/stage"
	"github.com/executor-dev/executor/stagekind"
	"github.com/executor-dev/executor/wire"
)

// someFail fails some tenants' deploy: those whose number ends in 3 permanently, in 7 with a
// transient error (one attempt allowed).
func someFail(_ context.Context, req stage.Request) (json.RawMessage, error) {
	switch {
	case strings.HasSuffix(req.TenantID, "3"):
		return nil, stage.Permanent(errors.New("bad config for " + req.TenantID))
	case strings.HasSuffix(req.TenantID, "7"):
		return nil, errors.New("flaky target for " + req.TenantID)
	}
	return json.RawMessage(`{}`), nil
}

// summaryOfListing counts every task of a plan as GET /v1/plans/{id}/tasks lists them, page by
// page: what the summary must equal.
func summaryOfListing(t *testing.T, base, planID string) (statuses map[string]int, stages map[int]map[string]int, classes map[string]int) {
	t.Helper()
	statuses, stages, classes = map[string]int{}, map[int]map[string]int{}, map[string]int{}
	cursor := ""
	for {
		page := decode[wire.TaskList](t, get(t, base+"/v1/plans/"+planID+"/tasks?limit=7&cursor="+cursor), http.StatusOK)
		for _, tk := range page.Tasks {
			statuses[tk.Status]++
			if stages[tk.CurrentStage] == nil {
				stages[tk.CurrentStage] = map[string]int{}
			}
			stages[tk.CurrentStage][tk.Status]++
			if tk.LastError != nil && tk.LastError.Class != "" {
				classes[tk.LastError.Class]++
			}
		}
		if page.NextCursor == "" {
			return statuses, stages, classes
		}
		cursor = page.NextCursor
	}
}

func requireSummaryEqualsListing(t *testing.T, base, planID string, n int) wire.PlanSummary {
	t.Helper()
	sum := decode[wire.PlanSummary](t, get(t, base+"/v1/plans/"+planID+"/summary"), http.StatusOK)
	statuses, stages, classes := summaryOfListing(t, base, planID)
	require.Equal(t, n, sum.Total)
	for st, c := range sum.Statuses {
		assert.Equal(t, statuses[st], c, "status %s", st)
	}
	for _, sc := range sum.Stages {
		want := stages[sc.Index]
		if want == nil {
			want = map[string]int{}
		}
		assert.Equal(t, want, sc.Counts, "stage %d %s", sc.Index, sc.Name)
	}
	got := map[string]int{}
	for _, c := range sum.FailureClasses {
		got[c.Class] = c.Count
		assert.NotEmpty(t, c.SampleTenantID, "class %s has a sample", c.Class)
		assert.Contains(t, c.SampleMessage, c.SampleTenantID, "the sample's message is its tenant's")
	}
	assert.Equal(t, classes, got)
	return sum
}

// GET /v1/plans/{id}/summary counts what listing every task counts: while the plan runs
// (every answer adds up to the plan's tasks) and once it is at rest, before and after
// approvals move tasks on.
func TestPlanSummaryEqualsTheListing(t *testing.T) {
	t.Parallel()
	base := startServer(t, func(r *stagekind.Registry) {
		require.NoError(t, r.Register("somefail", stage.HandlerFunc(someFail)))
	})
	const n = 60
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("sum-%02d", i)
	}
	p := submit(t, base, wire.PlanRequest{Name: "summary", Tenants: tenants(ids...), MaxConcurrency: 8,
		Stages: []wire.StageRequest{noop("prep"), sleep("bake", "10ms"),
			{Name: "deploy", Kind: "somefail", Retry: &wire.RetryRequest{MaxAttempts: 1}},
			approval("gate", "ship?"), noop("after")}})

	var polls atomic.Int32
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // concurrent readers while the runs write
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			res := get(t, base+"/v1/plans/"+p.PlanID+"/summary")
			if !assert.Equal(t, http.StatusOK, res.status) {
				return
			}
			var sum wire.PlanSummary
			if !assert.NoError(t, json.Unmarshal(res.body, &sum)) {
				return
			}
			total, byStage := 0, 0
			for _, c := range sum.Statuses {
				total += c
			}
			for _, sc := range sum.Stages {
				for _, c := range sc.Counts {
					byStage += c
				}
			}
			assert.Equal(t, n, total, "the statuses add up to the plan's tasks")
			assert.Equal(t, n, byStage, "the stage matrix adds up to the plan's tasks")
			polls.Add(1)
		}
	}()
	atRest := func(s wire.PlanSummary) bool {
		return s.Statuses["WAITING"]+s.Statuses["FAILED"]+s.Statuses["COMPLETED"] == n
	}
	require.Eventually(t, func() bool {
		return atRest(decode[wire.PlanSummary](t, get(t, base+"/v1/plans/"+p.PlanID+"/summary"), http.StatusOK))
	}, 20*time.Second, 20*time.Millisecond)
	close(stop)
	wg.Wait()
	require.Positive(t, polls.Load())

	sum := requireSummaryEqualsListing(t, base, p.PlanID, n)
	assert.Equal(t, 12, sum.Statuses["FAILED"], "tenants ending in 3 or 7 fail their deploy")
	assert.Equal(t, n-12, sum.Statuses["WAITING"])
	require.Len(t, sum.Gates, 1)
	assert.Equal(t, wire.GateCount{StageIndex: 3, Stage: "gate", Waiting: n - 12}, sum.Gates[0])
	assert.Len(t, sum.FailureClasses, 2, "a permanent and a transient class")

	for _, id := range ids[:5] {
		if id[len(id)-1] != '3' && id[len(id)-1] != '7' {
			postJSON(t, base+"/v1/tenants/"+id+"/approve", nil)
		}
	}
	require.Eventually(t, func() bool {
		return decode[wire.PlanSummary](t, get(t, base+"/v1/plans/"+p.PlanID+"/summary"), http.StatusOK).Statuses["COMPLETED"] == 4
	}, 10*time.Second, 20*time.Millisecond)
	sum = requireSummaryEqualsListing(t, base, p.PlanID, n)
	assert.Equal(t, 4, sum.Stages[5].Counts["COMPLETED"], "past the last stage")
	assert.Len(t, sum.Stages, 6, "five stages, then every stage done")
}

// A plan's JSON carries its task ids only when asked: ?include=taskIds.
func TestPlanJSONCarriesTaskIDsOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	p := submit(t, base, wire.PlanRequest{Name: "ids", Tenants: tenants("ids-1", "ids-2"), Stages: []wire.StageRequest{noop("a")}})
	require.Len(t, p.TaskIDs, 2, "the submission's answer names the tasks it created")
	tests := []struct {
		name, path string
		want       int
	}{
		{"plan", "/v1/plans/" + p.PlanID, 0},
		{"plan with its ids", "/v1/plans/" + p.PlanID + "?include=taskIds", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := get(t, base+tc.path)
			require.Equal(t, http.StatusOK, res.status)
			var raw map[string]any
			require.NoError(t, json.Unmarshal(res.body, &raw))
			ids, _ := raw["taskIds"].([]any)
			assert.Len(t, ids, tc.want)
			assert.Equal(t, float64(2), raw["progress"].(map[string]any)["total"])
		})
	}
	list := listPlans(t, base, "")
	require.NotEmpty(t, list.Plans)
	assert.Empty(t, list.Plans[0].TaskIDs, "the plans list leaves the ids out")
	assert.Len(t, listPlans(t, base, "?include=taskIds").Plans[0].TaskIDs, 2)
}
