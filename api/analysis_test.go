package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/executor-dev/executor/wire"
)

// A wave's analyses are checked at submission, each problem naming its field; nothing is
// created.
func TestRingAnalysisBadInput(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	good := func() map[string]any {
		return map[string]any{"address": "http://127.0.0.1:9090", "query": `max(errors{wave="{{.Params.wave}}"})`, "successCondition": "result < 0.01"}
	}
	tests := []struct {
		name  string
		edit  func(a map[string]any, w []wire.WaveRequest)
		field string
	}{
		{"on the last wave", func(a map[string]any, w []wire.WaveRequest) { w[1].Analysis = []map[string]any{a} }, "waves[1].analysis"},
		{"a count", func(a map[string]any, _ []wire.WaveRequest) { a["count"] = 3 }, "waves[0].analysis[0].count"},
		{"no query", func(a map[string]any, _ []wire.WaveRequest) { delete(a, "query") }, "waves[0].analysis[0].query"},
		{"no condition", func(a map[string]any, _ []wire.WaveRequest) { delete(a, "successCondition") }, "waves[0].analysis[0].successCondition"},
		{"a condition that does not compile", func(a map[string]any, _ []wire.WaveRequest) { a["successCondition"] = "result <" }, "waves[0].analysis[0].successCondition"},
		{"an unknown param", func(a map[string]any, _ []wire.WaveRequest) { a["treshold"] = 1 }, "waves[0].analysis[0].treshold"},
		{"another kind", func(a map[string]any, _ []wire.WaveRequest) { a["kind"] = "http" }, "waves[0].analysis[0].kind"},
		{"a name that is not a string", func(a map[string]any, _ []wire.WaveRequest) { a["name"] = 7 }, "waves[0].analysis[0].name"},
		{"a template reading the tenant", func(a map[string]any, _ []wire.WaveRequest) { a["query"] = `errors{tenant="{{.TenantID}}"}` }, "waves[0].analysis[0].query"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := good()
			waves := []wire.WaveRequest{{Name: "canary", Size: 1, Bake: "1m", Analysis: []map[string]any{a}}, {Name: "rest", Size: "rest"}}
			tt.edit(a, waves)
			req := wire.PlanRequest{Name: "analysed", Stages: []wire.StageRequest{noop("deploy")}, Tenants: tenants(fmt.Sprintf("ba-%d", i), "ba-x"), Waves: waves}
			p := requireProblem(t, postJSON(t, base+"/v1/plans", req), http.StatusBadRequest, tt.field)
			assert.Len(t, p.Errors, 1, "%+v", p.Errors)
			requireProblem(t, get(t, base+fmt.Sprintf("/v1/tenants/ba-%d/task", i)), http.StatusNotFound, "")
		})
	}
}
