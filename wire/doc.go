// Package wire is the JSON shapes of the executor's HTTP API (docs/api.md): the request and
// response bodies, the problem+json error body with its type URIs, the event GET /v1/events
// sends, and the headers of a submission. The server (package api) writes them and reads the
// requests into them; the client (package client) sends and decodes them; infra/eventstream
// stores events on Redis in the same form (docs/redis.md).
//
// It holds types and constants only, no behaviour, and imports nothing but the standard
// library: a program that talks to an executor imports it without the server. Mapping
// aggregates to these shapes is the server's business (api's mapping files).
//
// Files:
//   - submit.go: the plan submission (PlanRequest and its stages, waves, canary, tenants);
//   - plan.go: a plan, a page of plans, a dry run; rings.go: a rolling plan's rings;
//   - task.go: a task, a page of tasks, a checkpoint, a tenant's retry body;
//   - summary.go: a plan's summary; executors.go: the executors of the cluster;
//   - bulk.go, rollout.go: the bodies and answers of the rollout-control routes;
//   - event.go: one event of GET /v1/events; health.go: /healthz and /readyz;
//   - problem.go: the problem+json body and its types; headers.go: the submission's headers.
package wire
