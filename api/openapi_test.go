package api_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/executor-dev/executor/api/openapitest"
)

// openAPIFile is the API's OpenAPI description, kept in step with the router by
// TestOpenAPIMatchesRouter.
const openAPIFile = "../docs/openapi.yaml"

// openAPIOperation is the part of an OpenAPI operation the test checks.
type openAPIOperation struct {
	// Security is nil when the operation inherits the global requirement, and empty when it
	// overrides it with [] (a public route).
	Security  *[]map[string][]string `yaml:"security"`
	Responses map[string]yaml.Node   `yaml:"responses"`
}

// openAPIMethods are the keys of an OpenAPI path item that are operations.
var openAPIMethods = map[string]string{
	"get": http.MethodGet, "head": http.MethodHead, "post": http.MethodPost, "put": http.MethodPut,
	"patch": http.MethodPatch, "delete": http.MethodDelete, "options": http.MethodOptions, "trace": http.MethodTrace,
}

// readOpenAPI returns docs/openapi.yaml's operations by "METHOD normalised-path".
func readOpenAPI(t *testing.T) map[string]openAPIOperation {
	t.Helper()
	b, err := os.ReadFile(openAPIFile)
	require.NoError(t, err)
	var doc struct {
		OpenAPI string                          `yaml:"openapi"`
		Paths   map[string]map[string]yaml.Node `yaml:"paths"`
	}
	require.NoError(t, yaml.Unmarshal(b, &doc), openAPIFile)
	require.True(t, strings.HasPrefix(doc.OpenAPI, "3.1"), "OpenAPI 3.1, not %q", doc.OpenAPI)
	ops := map[string]openAPIOperation{}
	for path, item := range doc.Paths {
		for key, node := range item {
			method, ok := openAPIMethods[key]
			if !ok {
				continue // parameters, summary, ...
			}
			var op openAPIOperation
			require.NoError(t, node.Decode(&op), "%s %s", key, path)
			ops[method+" "+normalisePath(path)] = op
		}
	}
	return ops
}

// normalisePath makes a chi pattern and an OpenAPI path comparable: no trailing slash (chi
// reports a sub-router's root as "/v1/plans/"), and every parameter ({planId} in both, chi's
// wildcard *, OpenAPI's {path}) as "{}".
func normalisePath(p string) string {
	if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if s == "*" || (strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}")) {
			segs[i] = "{}"
		}
	}
	return strings.Join(segs, "/")
}

func normaliseRoute(methodAndPath string) string {
	method, path, _ := strings.Cut(methodAndPath, " ")
	return method + " " + normalisePath(path)
}

// docs/openapi.yaml describes exactly the routes the router registers (every option set),
// each protected one with its 401, each public one with security: [].
func TestOpenAPIMatchesRouter(t *testing.T) {
	t.Parallel()
	h, _ := fullRouter(t, testKeys())
	var routed []string
	for _, r := range routeTable(t, h) {
		routed = append(routed, normaliseRoute(r.String()))
	}
	ops := readOpenAPI(t)
	documented := make([]string, 0, len(ops))
	for k := range ops {
		documented = append(documented, k)
	}
	sort.Strings(documented)

	for _, r := range routed {
		assert.Contains(t, documented, r, "the router serves %s: describe it in %s", r, openAPIFile)
	}
	for _, d := range documented {
		assert.Contains(t, routed, d, "%s describes %s: the router does not serve it", openAPIFile, d)
	}

	public := map[string]bool{}
	for _, p := range publicSet {
		public[normaliseRoute(p)] = true
	}
	mayChange := map[string]bool{}
	for _, p := range readMayChange {
		mayChange[normaliseRoute(p)] = true
	}
	for key, op := range ops {
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			require.NotEmpty(t, op.Responses, "responses")
			if public[key] {
				require.NotNil(t, op.Security, "a public route overrides the global security with []")
				assert.Empty(t, *op.Security, "a public route overrides the global security with []")
				return
			}
			assert.True(t, op.Security == nil || len(*op.Security) > 0, "a protected route keeps a security requirement")
			assert.Contains(t, op.Responses, "401", "a protected route documents its 401")
			method, _, _ := strings.Cut(key, " ")
			if method != http.MethodGet && method != http.MethodHead && !mayChange[key] {
				assert.Contains(t, op.Responses, "403", "a change documents its 403 (read token, console header)")
			}
		})
	}
}

func TestNormalisePath(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"/", "/"},
		{"/v1/plans/", "/v1/plans"},
		{"/v1/plans", "/v1/plans"},
		{"/v1/plans/{planId}/", "/v1/plans/{}"},
		{"/v1/plans/{planId}/pause", "/v1/plans/{}/pause"},
		{"/assets/*", "/assets/{}"},
		{"/assets/{path}", "/assets/{}"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, normalisePath(tc.in), tc.in)
	}
}

// Every plan of examples/ is a request docs/openapi.yaml allows: what a newcomer copies is
// what a client generated from the description may send.
func TestExamplesMatchTheDescription(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../examples/*.yaml")
	require.NoError(t, err)
	more, err := filepath.Glob("../examples/*/plan.yaml")
	require.NoError(t, err)
	files = append(append(files, more...), "../examples/hello.json")
	require.GreaterOrEqual(t, len(files), 7, "the examples were found")
	for _, file := range files {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(file)
			require.NoError(t, err)
			ct := "application/yaml"
			if strings.HasSuffix(file, ".json") {
				ct = "application/json"
			}
			req := httptest.NewRequest(http.MethodPost, "/v1/plans", bytes.NewReader(b))
			req.Header.Set("Content-Type", ct)
			require.NoError(t, openapitest.CheckRequest(req))
		})
	}

	t.Run("the check finds a plan the description refuses", func(t *testing.T) {
		t.Parallel()
		req := httptest.NewRequest(http.MethodPost, "/v1/plans", strings.NewReader(`{"stages":[{"name":"a"}],"tenants":[]}`))
		req.Header.Set("Content-Type", "application/json")
		require.Error(t, openapitest.CheckRequest(req), "a stage without its kind")
	})
}
