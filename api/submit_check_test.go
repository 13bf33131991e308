package api_test

import (
	"maps"
	"net/http"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/executor-dev/executor/wire"
)

func TestIdempotencyKeyWithAnotherBodyIs422(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	post := func(body, contentType string) response {
		return do(t, http.MethodPost, base+"/v1/plans", []byte(body),
			"Content-Type", contentType, wire.IdempotencyKeyHeader, "release-44")
	}
	first := decode[wire.Plan](t, post(`{"name":"r44","stages":[{"name":"bake","kind":"sleep","params":{"duration":"10ms"}}],"tenants":[{"id":"idk-1"}]}`,
		"application/json"), http.StatusCreated)

	// The same plan in YAML, keys in another order, a default spelled out: a replay.
	res := post("tenants:\n  - id: idk-1\nmaxConcurrency: 5\nstages:\n  - params: {duration: 10ms}\n    kind: sleep\n    name: bake\nname: r44\n",
		"application/yaml")
	replayed := decode[wire.Plan](t, res, http.StatusOK)
	assert.Equal(t, "true", res.header.Get(wire.IdempotentReplayedHeader))
	assert.Equal(t, first.PlanID, replayed.PlanID)

	// Another plan under the same key: refused, naming the key; nothing created.
	res = post(`{"name":"r44","stages":[{"name":"bake","kind":"sleep","params":{"duration":"20ms"}}],"tenants":[{"id":"idk-1"}]}`,
		"application/json")
	p := requireProblem(t, res, http.StatusUnprocessableEntity, wire.IdempotencyKeyHeader)
	assert.Equal(t, wire.ProblemIdempotencyMismatch, p.Type)
	assert.Contains(t, p.Detail, first.PlanID, "the detail names the first plan")
	assert.Empty(t, res.header.Get(wire.IdempotentReplayedHeader))
	assert.Len(t, listPlans(t, base, "").Plans, 1)
}

func TestSubmitListsEveryInvalidField(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	body := `{
	  "colour": "blue",
	  "maxConcurrency": "5",
	  "stages": [
	    {"name": "a", "kind": "noop", "retry": {"tries": 3}, "params": {"x": "{{.Params.nope}}"}},
	    {"name": "b", "kind": "shell", "timeout": "soon", "params": {"y": "{{index .Outputs \"later\" \"k\"}}"}}
	  ],
	  "tenants": [{"id": "ev-1"}, {"id": "bad id"}]
	}`
	for _, contentType := range []string{"application/json", "application/yaml"} { // JSON is YAML
		res := do(t, http.MethodPost, base+"/v1/plans", []byte(body), "Content-Type", contentType)
		p := requireProblem(t, res, http.StatusBadRequest, "colour")
		got := map[string]string{}
		for _, e := range p.Errors {
			got[e.Field] = e.Detail
		}
		assert.Equal(t, []string{
			"colour", "maxConcurrency", "stages[0].params.x", "stages[0].retry.tries", "stages[1].kind",
			"stages[1].params.y", "stages[1].timeout", "tenants[1].id",
		}, sortedFields(got), "every invalid field is listed: %+v", p.Errors)
		assert.Equal(t, "unknown field", got["colour"])
		assert.Equal(t, `unknown stage kind "shell": no live executor runs it; want one of approval, exec, http, noop, prometheus, sleep`, got["stages[1].kind"])
		assert.Contains(t, p.Detail, "(and 7 more, listed in errors)")
		assert.Zero(t, p.ErrorsOmitted)
	}
	assert.Empty(t, listPlans(t, base, "").Plans, "nothing was created")
}

func sortedFields(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}
