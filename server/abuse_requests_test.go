package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/api"
	"github.com/executor-dev/executor/console"
	"github.com/executor-dev/executor/wire"
)

// Limits of the abused executor: small, so that over-limit requests stay small.
const (
	abuseMaxBody        = 64 << 10
	abuseMaxTenants     = 20
	abuseMaxStages      = 4
	abuseMaxParamsBytes = 512
)

// abuseRoute is one route of the API: a method and a chi pattern ("/v1/plans/{planId}").
type abuseRoute struct {
	method, pattern string
}

func (r abuseRoute) String() string { return r.method + " " + r.pattern }

// abuseRequest is one malformed request.
type abuseRequest struct {
	route   abuseRoute // the route it abuses
	kind    string     // what is wrong with it
	method  string
	target  string // path and query, escaped
	header  http.Header
	body    []byte
	chunked bool // sent without a Content-Length
}

// apiRoutes lists every route of the API, walking a router built like the server's (with the
// console and /metrics mounted).
func apiRoutes(t *testing.T) []abuseRoute {
	t.Helper()
	h := api.NewRouter(nil, api.Options{Console: console.Handler(), Metrics: http.NotFoundHandler()})
	routes, ok := h.(chi.Routes)
	require.True(t, ok, "api.NewRouter returns a chi router")
	var out []abuseRoute
	require.NoError(t, chi.Walk(routes, func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if trimmed := strings.TrimSuffix(pattern, "/"); trimmed != "" {
			pattern = trimmed
		}
		out = append(out, abuseRoute{method, pattern})
		return nil
	}))
	// chi walks a pattern's methods in map order: sort, so that the seed decides everything.
	slices.SortFunc(out, func(a, b abuseRoute) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// abuseGen generates malformed requests deterministically from its rng.
type abuseGen struct {
	rng *rand.Rand
}

func (g *abuseGen) pick(options ...string) string { return options[g.rng.IntN(len(options))] }

// request returns a malformed request for route.
func (g *abuseGen) request(route abuseRoute) abuseRequest {
	r := abuseRequest{route: route, method: route.method, header: http.Header{}}
	// One request in six uses a method the route does not serve.
	if g.rng.IntN(6) == 0 {
		r.kind = "method"
		for r.method == route.method {
			r.method = g.pick(http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete,
				http.MethodOptions, http.MethodHead, http.MethodTrace, "FOO", "PROPFIND")
		}
		r.target = g.path(route, false)
		return r
	}
	switch {
	case route == abuseRoute{http.MethodPost, "/v1/plans"}:
		g.planSubmission(&r)
	case route.pattern == "/v1/events":
		r.kind = "events"
		r.target = route.pattern + g.eventsQuery(&r)
	case route.pattern == "/v1/tenants/{tenantId}/retry":
		r.kind = "retry"
		r.target = g.path(route, g.rng.IntN(2) == 0)
		g.retryBody(&r)
	default:
		r.kind = "path"
		r.target = g.path(route, true) + g.query(route)
		if route.method == http.MethodPost && g.rng.IntN(3) == 0 {
			r.body = g.garbage()
		}
	}
	return r
}

// path fills route's parameters: bad ones when bad (at least one bad where there is any),
// else well-formed ids that do not exist.
func (g *abuseGen) path(route abuseRoute, bad bool) string {
	p := route.pattern
	for _, name := range []string{"{planId}", "{taskId}"} {
		if strings.Contains(p, name) {
			id := ulid.Make().String()
			if bad {
				id = g.badULID()
			}
			p = strings.Replace(p, name, id, 1)
		}
	}
	if strings.Contains(p, "{tenantId}") {
		id := "ghost-" + fmt.Sprint(g.rng.IntN(1000))
		if bad {
			id = g.badTenant()
		}
		p = strings.Replace(p, "{tenantId}", id, 1)
	}
	if strings.HasSuffix(p, "*") {
		p = strings.TrimSuffix(p, "*") + g.pick("", "nope.js", "..%2F..%2Fetc%2Fpasswd", "%00", "a/b/c", strings.Repeat("x", 3000))
	}
	return p
}

// badULID is an escaped path segment that is not a ULID.
func (g *abuseGen) badULID() string {
	valid := ulid.Make().String()
	return g.pick(
		"x", "0", valid[:25], valid+"0", strings.ToLower(valid), "8"+valid[1:], valid[:25]+"U",
		"%00", "%0A", "..", "..%2F..%2Fetc", "%2E%2E", "%3A", "%7B"+valid[:24]+"%7D", "*", "%2A",
		"%FF%FE", "%C3%A9", url.PathEscape(valid+" "), strings.Repeat("A", 2000), strings.Repeat("0", 26)+"%00",
	)
}

// badTenant is an escaped path segment that is not a tenant id.
func (g *abuseGen) badTenant() string {
	return g.pick(
		"-lead", ".hidden", "_x", "a%3Ab", "a%7Bb%7D", "a*b", "a%2Ab", "a%20b", "%00", "a%00b", "a%0A", "%0D%0A",
		"a%2Fb", "..", "%2E%2E%2F", "%FF", "%C3%A9t%C3%A9", strings.Repeat("t", 129), strings.Repeat("t", 5000),
		"a%09b", "executor%3Aplan%3A%7Bx%7D",
	)
}

// query is a bad query string for route ("" when the route reads none).
func (g *abuseGen) query(route abuseRoute) string {
	switch route.pattern {
	case "/v1/plans":
		return "?" + g.pick("limit=-1", "limit=0", "limit=abc", "limit=99999999999999999999", "limit=1001",
			"status=NOPE", "status=%00", "cursor=bad", "cursor=%00", "limit=1&status=running%0A")
	case "/v1/plans/{planId}":
		return "?" + g.pick("wait=abc", "wait=-1s", "wait=1000h", "wait=%00", "wait=1e9", "wait=30")
	case "/v1/plans/{planId}/tasks":
		return "?" + g.pick("offset=-1", "offset=x", "limit=0", "limit=-5", "status=NOPE", "offset=99999999999999999999")
	}
	if g.rng.IntN(2) == 0 {
		return "?" + g.pick("a=%00", "x="+strings.Repeat("y", 1000), "%zz=1", ";;;")
	}
	return ""
}

// eventsQuery is a query for GET /v1/events with at least one bad filter or Last-Event-ID
// (a good one would open a stream).
func (g *abuseGen) eventsQuery(r *abuseRequest) string {
	q := []string{}
	switch g.rng.IntN(4) {
	case 0:
		q = append(q, "plan="+g.badULID())
	case 1:
		q = append(q, "tenant="+g.badTenant())
	case 2:
		q = append(q, "lastEventId="+g.pick("abc", "-1", "1e3", "99999999999999999999999", "%00", "0x10"))
	default:
		r.header.Set("Last-Event-ID", g.pick("abc", "-1", "1.5", "99999999999999999999999", "ﬁve", "7 8"))
		if g.rng.IntN(2) == 0 {
			q = append(q, "plan="+ulid.Make().String(), "tenant=ghost")
		}
	}
	return "?" + strings.Join(q, "&")
}

// retryBody is a bad POST /v1/tenants/{tenantId}/retry body (or a good one: the tenant is bad
// or has no task).
func (g *abuseGen) retryBody(r *abuseRequest) {
	r.header.Set("Content-Type", "application/json")
	switch g.rng.IntN(7) {
	case 0:
		r.body = []byte(g.pick(`{"fromCheckpoint":"yes"}`, `{"fromCheckpoint":1}`, `[true]`, `"x"`, `null x`))
	case 1:
		r.body = []byte(g.pick(`{"fromcheckpoint":true}`, `{"fromCheckpoint":true,"force":1}`))
	case 2:
		r.body = []byte(`{"fromCheckpoint":tr`)
	case 3:
		r.header.Set("Content-Type", g.pick("text/plain", "application/xml", "multipart/form-data; boundary=x"))
		r.body = []byte(`{"fromCheckpoint":true}`)
	case 4:
		r.body = g.oversized()
	case 5:
		r.body = g.garbage()
	default:
		r.body = []byte(`{"fromCheckpoint":true}`)
	}
}

// garbage is a short run of random bytes.
func (g *abuseGen) garbage() []byte {
	b := make([]byte, g.rng.IntN(200))
	for i := range b {
		b[i] = byte(g.rng.UintN(256))
	}
	return b
}

// oversized is a JSON object just over the body limit.
func (g *abuseGen) oversized() []byte {
	return []byte(`{"name":"` + strings.Repeat("x", abuseMaxBody+g.rng.IntN(4096)) + `"}`)
}

// abusePlan is a valid submission: every plan request breaks it in some way.
func abusePlan() map[string]any {
	return map[string]any{
		"name": "abuse",
		"stages": []any{
			map[string]any{"name": "bake", "kind": "sleep", "params": map[string]any{"duration": "1s"}},
			map[string]any{"name": "push", "kind": "http", "params": map[string]any{"url": "http://127.0.0.1:1/{{.TenantID}}"}},
		},
		"tenants": []any{map[string]any{"id": "ab-1"}, map[string]any{"id": "ab-2", "params": map[string]any{"v": "1"}}},
	}
}

func stageAt(p map[string]any, i int) map[string]any { return p["stages"].([]any)[i].(map[string]any) }
func tenantAt(p map[string]any, i int) map[string]any {
	return p["tenants"].([]any)[i].(map[string]any)
}

func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the generator's own values
	}
	return b
}

// planSubmission makes r a POST /v1/plans that must be refused, in one of many ways.
func (g *abuseGen) planSubmission(r *abuseRequest) {
	r.target = "/v1/plans"
	if g.rng.IntN(4) == 0 {
		r.target += "?dryRun=true"
	}
	r.header.Set("Content-Type", "application/json")
	p := abusePlan()
	mutations := []struct {
		kind   string
		mutate func()
	}{
		{"invalid JSON", func() {
			r.body = []byte(g.pick(`{`, `{"name":`, `{"name":"x",}`, `{'name':'x'}`, `{"stages":[}`, `nul`, `{"a" "b"}`, `}{`))
		}},
		{"garbage", func() { r.body = g.garbage() }},
		{"not an object", func() { r.body = []byte(g.pick(`[]`, `[1,2]`, `"plan"`, `42`, `null`, `true`)) }},
		{"trailing data", func() { r.body = append(marshal(p), []byte(g.pick(` {}`, `x`, `]`, ` "more"`))...) }},
		{"truncated", func() {
			b := marshal(p)
			r.body = b[:g.rng.IntN(len(b)-1)+1]
		}},
		{"wrong type", func() {
			switch g.rng.IntN(9) {
			case 0:
				p["maxConcurrency"] = "5"
			case 1:
				p["stages"] = map[string]any{}
			case 2:
				p["tenants"] = "ab-1"
			case 3:
				tenantAt(p, 0)["id"] = 7
			case 4:
				stageAt(p, 0)["params"] = []any{1}
			case 5:
				stageAt(p, 0)["timeout"] = 10
			case 6:
				p["failureBudget"] = true
			case 7:
				p["startAt"] = g.pick("yesterday", "2026-13-45T99:00:00Z", "1700000000")
			default:
				p["labels"] = []any{"a"}
			}
			r.body = marshal(p)
		}},
		{"invalid UTF-8", func() {
			b := marshal(p)
			switch g.rng.IntN(3) {
			case 0:
				r.body = bytes.Replace(b, []byte(`"ab-1"`), []byte("\"ab-\xff\xfe\""), 1)
			case 1:
				r.body = append([]byte{0xff, 0xfe}, b...)
			default:
				r.body = bytes.Replace(b, []byte(`"name"`), []byte("\"na\xc3me\""), 1)
			}
		}},
		{"huge number", func() {
			n := json.Number(g.pick(`1e400`, `99999999999999999999`, `-99999999999999999999`, `1e20`, `1.5`, `-0.5`))
			p[g.pick("maxConcurrency", "failureBudget")] = n
			r.body = marshal(p)
		}},
		{"bad concurrency", func() {
			p["maxConcurrency"] = json.Number(g.pick("-1", "-1000", "1001", "1000000"))
			r.body = marshal(p)
		}},
		{"negative budget", func() { p["failureBudget"] = -1; r.body = marshal(p) }},
		{"unknown field", func() {
			switch g.rng.IntN(4) {
			case 0:
				p["maxConcurency"] = 5
			case 1:
				stageAt(p, 0)["timout"] = "1s"
			case 2:
				tenantAt(p, 0)["ID"] = "x"
			default:
				p["Name"] = "case matters"
			}
			r.body = marshal(p)
		}},
		{"wrong Content-Type", func() {
			r.header.Set("Content-Type", g.pick("text/plain", "application/xml", "application/x-www-form-urlencoded",
				"json", "application/jsonx", "multipart/form-data; boundary=x", "application/json; charset=\"", "*/*"))
			r.body = marshal(p)
		}},
		{"oversized", func() { r.body = g.oversized() }},
		{"YAML", func() {
			r.header.Set("Content-Type", g.pick("application/yaml", "text/yaml", "application/x-yaml"))
			r.body = []byte(g.pick(
				"stages:\n\t- name: a\n", "a: b\n---\nc: d\n", "stages: [{name: a, kind: noop}]\ntenants: []\n",
				"stages: [{name: a, kind: noop, params: {x: .inf}}]\ntenants: [{id: t}]\n",
				"a: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b]\n"+
					"d: &d [*c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d]\n",
				"? [a, b]\n: c\n", "{{{{", "stages: *undefined\n", "tenants: [{id: 1.5}]\nstages: [{name: a, kind: noop}]\n",
			))
		}},
		{"no tenants", func() { p["tenants"] = []any{}; r.body = marshal(p) }},
		{"no stages", func() { delete(p, "stages"); r.body = marshal(p) }},
		{"duplicate tenants", func() { tenantAt(p, 1)["id"] = "ab-1"; r.body = marshal(p) }},
		{"bad tenant id", func() {
			tenantAt(p, g.rng.IntN(2))["id"] = g.pick("", "a:b", "t{1}", "a b", "-x", strings.Repeat("t", 129), "a\u0000b", "é")
			r.body = marshal(p)
		}},
		{"unknown stage kind", func() { stageAt(p, 1)["kind"] = g.pick("teleport", "", "HTTP", "sleep "); r.body = marshal(p) }},
		{"bad stage", func() {
			switch g.rng.IntN(6) {
			case 0:
				stageAt(p, 1)["name"] = "bake"
			case 1:
				stageAt(p, 0)["name"] = "a b"
			case 2:
				stageAt(p, 0)["timeout"] = "10 parsecs"
			case 3:
				stageAt(p, 0)["retry"] = map[string]any{"initialBackoff": "5s", "maxBackoff": "1s"}
			case 4:
				stageAt(p, 1)["params"] = map[string]any{"url": "http://x/{{.Params.v"}
			default:
				stageAt(p, 0)["params"] = map[string]any{"duration": "-1s"}
			}
			r.body = marshal(p)
		}},
		{"over-limit tenants", func() {
			n := abuseMaxTenants + 1 + g.rng.IntN(10)
			ts := make([]any, n)
			for i := range ts {
				ts[i] = map[string]any{"id": fmt.Sprintf("many-%d", i)}
			}
			p["tenants"] = ts
			r.body = marshal(p)
		}},
		{"over-limit stages", func() {
			n := abuseMaxStages + 1 + g.rng.IntN(4)
			ss := make([]any, n)
			for i := range ss {
				ss[i] = map[string]any{"name": fmt.Sprintf("s%d", i), "kind": "noop"}
			}
			p["stages"] = ss
			r.body = marshal(p)
		}},
		{"over-limit params", func() {
			big := map[string]any{"blob": strings.Repeat("p", abuseMaxParamsBytes)}
			if g.rng.IntN(2) == 0 {
				tenantAt(p, 1)["params"] = big
			} else {
				stageAt(p, 1)["params"] = map[string]any{"url": "http://x/", "blob": big["blob"]}
			}
			r.body = marshal(p)
		}},
		{"bad Idempotency-Key", func() {
			// The body is valid: the header alone must refuse it.
			switch g.rng.IntN(3) {
			case 0:
				r.header.Set(wire.IdempotencyKeyHeader, strings.Repeat("k", 201))
			case 1:
				r.header.Set(wire.IdempotencyKeyHeader, "clé")
			default:
				r.header.Add(wire.IdempotencyKeyHeader, "one")
				r.header.Add(wire.IdempotencyKeyHeader, "two")
			}
			r.body = marshal(p)
		}},
		{"bad dryRun", func() {
			r.target = "/v1/plans?dryRun=" + g.pick("maybe", "2", "%00", "yes")
			r.body = marshal(p)
		}},
	}
	m := mutations[g.rng.IntN(len(mutations))]
	r.kind = "plan: " + m.kind
	m.mutate()
	r.chunked = g.rng.IntN(10) == 0
}
