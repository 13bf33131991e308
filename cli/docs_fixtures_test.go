package cli_test

// The plans docs_examples_test.go runs the examples of docs/cli.md against. The docs name files
// that are not in the repository (plan.json, rollout.json) and show plans in states (tasks at
// a gate, tasks that failed, a plan in rings): each of those is a fixture here, carrying the
// tenant names and stage names the docs use, so that the docs' commands find what they name.

// docFixtures are the files the docs' examples submit (-f NAME) or the test submits first
// (submitted, in this order: the last one is the plan an example's `01JD7X...` names until an
// example submits one).
var docFixtures = []struct {
	file      string
	submitted bool // the test submits it before the first example
	body      string
}{
	// the plan with tenants at a gate (`plan show`, `plan bulk approve --stage gate --tenant eu-`)
	{file: "gated.yaml", submitted: true, body: `
name: gated
stages:
  - {name: prep, kind: noop}
  - {name: gate, kind: approval, params: {message: "go on?"}}
  - {name: after, kind: noop}
tenants: [{id: eu-1}, {id: eu-2}, {id: us-1}]
`},
	// the plan whose tasks failed at stage call (`plan summary`, `plan tasks --class permanent --stage call`)
	{file: "failed.yaml", submitted: true, body: `
name: failed
stages:
  - {name: prep, kind: noop}
  - {name: call, kind: http, params: {method: GET, url: "{{.ExecutorURL}}/nope-{{.TenantID}}"}, retry: {maxAttempts: 1}}
  - {name: gate, kind: approval}
  - {name: after, kind: noop}
tenants: [{id: t-1}, {id: t-2}]
`},
	// the plan of `plan retry --status failed` and `plan bulk retry`: br-1 and br-2 failed
	{file: "bulk.yaml", submitted: true, body: `
name: bulk
stages:
  - {name: s1, kind: noop}
  - name: s2
    kind: http
    params: {method: GET, url: '{{.ExecutorURL}}/{{if eq .TenantID "br-3"}}healthz{{else}}nope{{end}}'}
    retry: {maxAttempts: 1}
tenants: [{id: br-1}, {id: br-2}, {id: br-3}]
`},
	// the plan in rings whose first ring awaits approval (`plan reject --rollback`, `plan bulk rollback --ring first`)
	{file: "config.yaml", submitted: true, body: `
name: config
waves:
  - {name: first, size: 2, then: approve}
  - {name: rest, size: rest}
stages:
  - {name: push-config, kind: noop, undo: {kind: noop}}
  - {name: verify, kind: noop, undo: {kind: noop}}
tenants: [{id: r-1}, {id: r-2}, {id: r-3}, {id: r-4}]
`},
	// tenant-001, the docs' tenant of every tenant command: completed stages that have undos
	{file: "tenant.yaml", submitted: true, body: `
name: tenant
stages:
  - {name: prep, kind: noop, undo: {kind: noop}}
  - {name: config, kind: noop, undo: {kind: noop}}
  - {name: after, kind: noop, undo: {kind: noop}}
tenants: [{id: tenant-001}]
`},
	// `submit -f plan.json --wait`
	{file: "plan.json", body: `{"name": "plan-json", "stages": [{"name": "s1", "kind": "noop"}], "tenants": [{"id": "pj-1"}]}`},
	// `submit -f plan.yaml --dry-run`
	{file: "plan.yaml", body: `
name: plan-yaml
stages: [{name: s1, kind: noop}]
tenants: [{id: py-1}]
`},
	// "A failed rollout, step by step": t2 fails at s3 with a permanent error, s1 and s2 completed
	{file: "rollout.json", body: `{"name": "rollout", "stages": [
  {"name": "s1", "kind": "noop"}, {"name": "s2", "kind": "noop"},
  {"name": "s3", "kind": "http", "retry": {"maxAttempts": 1},
   "params": {"method": "GET", "url": "{{.ExecutorURL}}/{{if eq .TenantID \"t2\"}}nope{{else}}healthz{{end}}"}},
  {"name": "s4", "kind": "noop"}],
  "tenants": [{"id": "t1"}, {"id": "t2"}, {"id": "t3"}]}`},
}

// stdinPlan is what a program piped into `executor submit -f -` writes (`render-plan |`).
const stdinPlan = `{"name": "rendered", "stages": [{"name": "s1", "kind": "noop"}], "tenants": [{"id": "in-1"}]}`

// docPlans names, for each plan id docs/cli.md shows, the file of the plan that plays its part.
// Any other id, and an elided one (`01JD7X...`), is the plan the last example submitted.
var docPlans = map[string]string{
	"01M86RDN6K6CT7KZ0CK91T8JJ9": "gated.yaml",
	"01M86RD5R5VRKN1RWQ9NMAX6G4": "failed.yaml",
	"01M7ZY72HNTWJ28W3YY3F8N1KX": "bulk.yaml",
	"01M8K3PZ4Y2V1B0QJ6N7X8R5TA": "config.yaml",
	"01M7ZY7WDJ0ZYBZ2YYZ0RKZSZ4": "examples/canary-approval.yaml",
}

// columnFixtures are the plans the check of the "Table columns" table runs its commands on.
var columnFixtures = []struct{ file, body string }{
	// a task failed (c-fail), one waits at a gate (c-gate), one runs (c-run): every section of a summary
	{file: "mixed.yaml", body: `
name: mixed
maxConcurrency: 10
stages:
  - {name: call, kind: http, params: {method: GET, url: "{{.ExecutorURL}}/{{.Params.path}}"}, retry: {maxAttempts: 1}}
  - {name: bake, kind: sleep, params: {duration: "{{.Params.bake}}"}}
  - {name: gate, kind: approval}
tenants:
  - {id: c-fail, params: {path: nope, bake: 1ms}}
  - {id: c-gate, params: {path: healthz, bake: 1ms}}
  - {id: c-run, params: {path: healthz, bake: 1h}}
`},
	// c-old fails here, then has a newer task: a retry of this plan skips it
	{file: "old.yaml", body: `
name: old
stages: [{name: call, kind: http, params: {method: GET, url: "{{.ExecutorURL}}/nope"}, retry: {maxAttempts: 1}}]
tenants: [{id: c-old}]
`},
	{file: "new.yaml", body: `
name: new
stages: [{name: s1, kind: noop}]
tenants: [{id: c-old}]
`},
	{file: "dry.yaml", body: `
name: dry
stages: [{name: s1, kind: noop}]
tenants: [{id: c-dry}]
`},
}
