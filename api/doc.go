// Package api is the executor's HTTP API (docs/design.md §7): JSON under /v1, errors as RFC 9457
// application/problem+json naming the first invalid field, plus /healthz, /readyz, /metrics
// and the console's routes.
//
// The package is a thin transport over the use cases of package app: handlers decode and check
// the request (strict JSON or YAML, size-limited) into a body of package wire, call one
// app.Service method, and write a wire body mapped from the result (mapping.go,
// rings_mapping.go, rollout_mapping.go). Aggregates never reach the wire. Every error
// goes through one writer (problem.go) that maps domain and app errors to status codes.
//
// Files:
//   - router.go: NewRouter, Options and the route table;
//   - middleware.go: X-Request-Id and panic recovery;
//   - observe.go: request metrics and the access log; audit.go: the operator-action log;
//   - auth.go: bearer tokens and roles (read for GET/HEAD, operate for the rest), the console
//     cookie and its CSRF header; login.go: the console's POST /login and /logout;
//   - events.go: GET /v1/events (server-sent events);
//   - problem.go: the error writer; respond.go: JSON responses;
//   - decode.go, shape.go: strict JSON/YAML body decoding with field paths;
//   - query.go: query and path parameters;
//   - submit_request.go, submit_waves.go: wire.PlanRequest → app.SubmitRequest;
//   - plans.go, tenants.go, tasks.go, health.go: the handlers;
//   - retry_plan.go (bulk retry), gates.go (approval gate decisions; a canary wave's are plan
//     controls in plans.go), lock.go (the tenant lock tools): rollout control.
//
// docs/api.md is the reference for API users.
package api
