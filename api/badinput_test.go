package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/api"
)

// validPlan is a submission that passes; the bad-input cases break one thing in it.
const validPlan = `{
  "name": "bad-input",
  "stages": [{"name": "bake", "kind": "sleep", "params": {"duration": "{{.Params.d}}"}}],
  "tenants": [{"id": "t-0", "params": {"d": "10ms"}}, {"id": "t-1", "params": {"d": "20ms"}}]
}`

// planWith returns validPlan as JSON after change edits its decoded form.
func planWith(t *testing.T, change func(p map[string]any)) string {
	t.Helper()
	var p map[string]any
	require.NoError(t, json.Unmarshal([]byte(validPlan), &p))
	change(p)
	b, err := json.Marshal(p)
	require.NoError(t, err)
	return string(b)
}

func stageOf(p map[string]any, i int) map[string]any {
	return p["stages"].([]any)[i].(map[string]any)
}

func tenantOf(p map[string]any, i int) map[string]any {
	return p["tenants"].([]any)[i].(map[string]any)
}

func TestSubmitBadInput(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	const yamlType = "application/yaml"

	tests := []struct {
		name        string
		body        string
		contentType string // default application/json
		query       string
		status      int    // default 400
		field       string // the first invalid field
	}{
		{name: "malformed JSON", body: `{"name": "x", "stages": [`, field: "body"},
		{name: "trailing data", body: validPlan + ` {}`, field: "body"},
		{name: "empty body", body: ``, field: "body"},
		{name: "not an object", body: `[1, 2]`, field: "body"},
		{name: "unknown field", body: planWith(t, func(p map[string]any) { p["maxConcurency"] = 5 }), field: "maxConcurency"},
		{name: "field names are case-sensitive", body: planWith(t, func(p map[string]any) { p["Name"] = "x" }), field: "Name"},
		{name: "unknown nested field", body: planWith(t, func(p map[string]any) { stageOf(p, 0)["timout"] = "1s" }), field: "stages[0].timout"},
		{name: "wrong type", body: planWith(t, func(p map[string]any) { p["maxConcurrency"] = "5" }), field: "maxConcurrency"},
		{name: "fractional integer", body: planWith(t, func(p map[string]any) { p["failureBudget"] = 1.5 }), field: "failureBudget"},
		{name: "tenant id with a brace", body: planWith(t, func(p map[string]any) { tenantOf(p, 1)["id"] = "t{1}" }), field: "tenants[1].id"},
		{name: "tenant id with a colon", body: planWith(t, func(p map[string]any) { tenantOf(p, 1)["id"] = "t:1" }), field: "tenants[1].id"},
		{name: "duplicate tenant", body: planWith(t, func(p map[string]any) { tenantOf(p, 1)["id"] = "t-0" }), field: "tenants[1].id"},
		{name: "no tenants", body: planWith(t, func(p map[string]any) { p["tenants"] = []any{} }), field: "tenants"},
		{name: "no stages", body: planWith(t, func(p map[string]any) { p["stages"] = []any{} }), field: "stages"},
		{name: "unknown stage kind", body: planWith(t, func(p map[string]any) { stageOf(p, 0)["kind"] = "teleport" }), field: "stages[0].kind"},
		{name: "bad stage name", body: planWith(t, func(p map[string]any) { stageOf(p, 0)["name"] = "a b" }), field: "stages[0].name"},
		{
			name: "template reads a missing param",
			body: planWith(t, func(p map[string]any) {
				delete(tenantOf(p, 1)["params"].(map[string]any), "d")
			}),
			field: "stages[0].params.duration",
		},
		{
			name:  "template does not parse",
			body:  planWith(t, func(p map[string]any) { stageOf(p, 0)["params"] = map[string]any{"duration": "{{.Params.d"} }),
			field: "stages[0].params.duration",
		},
		{
			name: "template reads a later stage's output",
			body: planWith(t, func(p map[string]any) {
				p["stages"] = append([]any{map[string]any{"name": "first", "kind": "noop",
					"params": map[string]any{"x": `{{index .Outputs "bake" "slept"}}`}}}, p["stages"].([]any)...)
			}),
			field: "stages[0].params.x",
		},
		{
			name: "dotted access into an output",
			body: planWith(t, func(p map[string]any) {
				p["stages"] = append(p["stages"].([]any), map[string]any{"name": "report", "kind": "noop",
					"params": map[string]any{"msg": "{{.Outputs.bake.slept}}"}})
			}),
			field: "stages[1].params.msg",
		},
		{name: "bad stage timeout", body: planWith(t, func(p map[string]any) { stageOf(p, 0)["timeout"] = "10 parsecs" }), field: "stages[0].timeout"},
		{
			name: "bad retry backoff",
			body: planWith(t, func(p map[string]any) {
				stageOf(p, 0)["retry"] = map[string]any{"initialBackoff": "fast", "maxBackoff": "slow"}
			}),
			field: "stages[0].retry.initialBackoff",
		},
		{
			name:  "bad jitter",
			body:  planWith(t, func(p map[string]any) { stageOf(p, 0)["retry"] = map[string]any{"jitter": "lots"} }),
			field: "stages[0].retry.jitter",
		},
		{name: "bad kind param", body: planWith(t, func(p map[string]any) { tenantOf(p, 1)["params"] = map[string]any{"d": "soon"} }), field: "stages[0].params.duration"},
		{name: "maxConcurrency too high", body: planWith(t, func(p map[string]any) { p["maxConcurrency"] = 5000 }), field: "maxConcurrency"},
		{name: "negative failure budget", body: planWith(t, func(p map[string]any) { p["failureBudget"] = -1 }), field: "failureBudget"},
		{name: "bad startAt", body: planWith(t, func(p map[string]any) { p["startAt"] = "tomorrow" }), field: "startAt"},
		{name: "bad dryRun", body: validPlan, query: "?dryRun=maybe", field: "dryRun"},
		{name: "oversized body", body: `{"name": "` + strings.Repeat("x", api.DefaultMaxBodyBytes) + `"}`, status: http.StatusRequestEntityTooLarge, field: "body"},
		{name: "unsupported media type", body: validPlan, contentType: "text/plain", status: http.StatusUnsupportedMediaType, field: "Content-Type"},
		{name: "malformed YAML", body: "name: [unclosed", contentType: yamlType, field: "body"},
		{name: "YAML unknown field", body: "maxConcurency: 5\nstages: []\n", contentType: yamlType, field: "maxConcurency"},
		{name: "YAML wrong type", body: "stages: {name: a}\n", contentType: yamlType, field: "stages"},
		{name: "YAML two documents", body: "name: a\n---\nname: b\n", contentType: yamlType, field: "body"},
		{name: "YAML empty document", body: "# nothing\n", contentType: yamlType, field: "body"},
		{name: "YAML not finite", body: "name: a\nfailureBudget: .inf\n", contentType: yamlType, field: "failureBudget"},
		{name: "YAML alias of a large scalar", body: yamlScalarBomb(), contentType: yamlType, status: http.StatusRequestEntityTooLarge, field: "body"},
		{name: "YAML aliases of aliases", body: yamlLaughs(), contentType: yamlType, status: http.StatusRequestEntityTooLarge, field: "body"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ct := tc.contentType
			if ct == "" {
				ct = "application/json"
			}
			status := tc.status
			if status == 0 {
				status = http.StatusBadRequest
			}
			for _, dryRun := range []bool{false, true} {
				query := tc.query
				if query == "" && dryRun {
					query = "?dryRun=true"
				}
				res := do(t, http.MethodPost, base+"/v1/plans"+query, []byte(tc.body), "Content-Type", ct)
				requireProblem(t, res, status, tc.field)
			}
			assert.Empty(t, listPlans(t, base, "").Plans, "nothing was created")
		})
	}

	t.Run("every invalid field is listed", func(t *testing.T) {
		t.Parallel()
		body := planWith(t, func(p map[string]any) {
			p["maxConcurrency"] = 5000
			stageOf(p, 0)["kind"] = "teleport"
			tenantOf(p, 1)["id"] = "t:1"
		})
		p := requireProblem(t, postJSON(t, base+"/v1/plans", json.RawMessage(body)), http.StatusBadRequest, "maxConcurrency")
		var fields []string
		for _, e := range p.Errors {
			fields = append(fields, e.Field)
			assert.NotEmpty(t, e.Detail)
		}
		assert.ElementsMatch(t, []string{"maxConcurrency", "stages[0].kind", "tenants[1].id"}, fields)
	})

	t.Run("every bad duration is listed", func(t *testing.T) {
		t.Parallel()
		body := planWith(t, func(p map[string]any) {
			stageOf(p, 0)["timeout"] = "soon"
			stageOf(p, 0)["retry"] = map[string]any{"maxBackoff": "later"}
		})
		p := requireProblem(t, postJSON(t, base+"/v1/plans", json.RawMessage(body)), http.StatusBadRequest, "stages[0].timeout")
		require.Len(t, p.Errors, 2)
		assert.Equal(t, "stages[0].retry.maxBackoff", p.Errors[1].Field)
	})

	t.Run("the valid plan passes", func(t *testing.T) {
		// Not parallel: runs before the cases above, which check that nothing is created.
		res := do(t, http.MethodPost, base+"/v1/plans?dryRun=true", []byte(validPlan), "Content-Type", "application/json")
		assert.Equal(t, http.StatusOK, res.status, "body: %s", res.body)
		anchored := "name: anchors\nstages:\n  - {name: a, kind: noop, retry: &r {maxAttempts: 2}}\n  - {name: b, kind: noop, retry: *r}\ntenants: [{id: y1}]\n"
		res = do(t, http.MethodPost, base+"/v1/plans?dryRun=true", []byte(anchored), "Content-Type", yamlType)
		assert.Equal(t, http.StatusOK, res.status, "a YAML plan with anchors within the limit: %s", res.body)
	})
}

// yamlScalarBomb is a 256 KiB YAML body whose one 256 KiB string is aliased 200 times: 50 MiB
// once expanded, past the 32 MiB body limit.
func yamlScalarBomb() string {
	var b strings.Builder
	b.WriteString("name: &x \"" + strings.Repeat("x", 256<<10) + "\"\nlabels: {")
	for i := range 200 {
		fmt.Fprintf(&b, "k%d: *x, ", i)
	}
	b.WriteString("}\n")
	return b.String()
}

// yamlLaughs is a billion laughs: nine levels of ten aliases of the level below.
func yamlLaughs() string {
	var b strings.Builder
	b.WriteString("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [", i, i)
		for range 10 {
			fmt.Fprintf(&b, "*l%d, ", i-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

// A YAML body with a syntax error is a 400 naming the line of the mistake, not the line where
// the list holding it began, with a hint for a template holding double quotes in a
// double-quoted string.
func TestSubmitYAMLSyntaxErrorNamesItsLine(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	tests := []struct {
		name, body, detail string
	}{
		{"a list item indented too far", "name: p\nstages:\n  - name: a\n    kind: noop\n   - name: b\n    kind: noop\ntenants:\n  - id: t\n",
			"body: is not valid YAML: line 5: did not find expected '-' indicator"},
		{"a template with double quotes in double quotes", "name: p\nstages:\n  - name: a\n    kind: http\n    params:\n      url: \"{{ index .Params \"k\" }}\"\ntenants:\n  - id: t\n",
			"body: is not valid YAML: line 6: did not find expected key (a template in a double-quoted string cannot hold a double quote: " +
				`quote the value with single quotes instead, as in '{{ index .Params "k" }}', or escape the inner quotes as \")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := do(t, http.MethodPost, base+"/v1/plans", []byte(tt.body), "Content-Type", "application/yaml")
			p := requireProblem(t, res, http.StatusBadRequest, "body")
			assert.Equal(t, tt.detail, p.Detail)
		})
	}
}
